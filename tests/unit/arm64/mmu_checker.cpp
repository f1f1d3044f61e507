// The break-before-make and well-formedness checkers (mmu_checker.h).
#include "mmu_checker.h"
#include "kernel/arch/physmem.h"
#include <algorithm>
#include <cstdio>

namespace toll::test {
namespace {

using B = Arm64Bits;

bool valid(uint64_t d)
{
    return d & B::valid;
}

std::string hex(uint64_t v)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%#llx", static_cast<unsigned long long>(v));
    return buf;
}

const uint64_t* host_table(uint64_t descriptor, Arm64Geometry g)
{
    return static_cast<const uint64_t*>(arch::phys_to_virt(descriptor & g.address_mask()));
}

} // namespace

void BbmChecker::watch(uint64_t* l1, uint64_t user_limit, bool live)
{
    forget(l1);
    m_watched.push_back({l1, user_limit, live});
}

void BbmChecker::forget(uint64_t* l1)
{
    m_watched.erase(std::remove_if(m_watched.begin(), m_watched.end(),
                                   [&](const Watched& w) { return w.l1 == l1; }),
                    m_watched.end());
}

void BbmChecker::set_live(uint64_t* l1, bool live)
{
    for (Watched& w : m_watched)
        if (w.l1 == l1)
            w.live = live;
}

bool BbmChecker::locate(uint64_t* slot, const Watched** which, unsigned* level, uint64_t* va) const
{
    for (const Watched& w : m_watched) {
        uint64_t l1_slots = (w.user_limit - 1) / m_g.l1_span() + 1;
        if (slot >= w.l1 && slot < w.l1 + l1_slots) {
            *which = &w;
            *level = 1;
            *va = uint64_t(slot - w.l1) * m_g.l1_span();
            return true;
        }
        for (uint64_t i = 0; i < l1_slots; ++i) {
            if (!valid(w.l1[i]))
                continue;
            auto* l2 = const_cast<uint64_t*>(host_table(w.l1[i], m_g));
            if (slot >= l2 && slot < l2 + m_g.entries()) {
                *which = &w;
                *level = 2;
                *va = i * m_g.l1_span() + uint64_t(slot - l2) * m_g.l2_block();
                return true;
            }
            for (unsigned j = 0; j < m_g.entries(); ++j) {
                uint64_t e = l2[j];
                if (!valid(e) || (e & B::type_mask) != B::type_table_or_page)
                    continue;
                auto* l3 = const_cast<uint64_t*>(host_table(e, m_g));
                if (slot >= l3 && slot < l3 + m_g.entries()) {
                    *which = &w;
                    *level = 3;
                    *va = i * m_g.l1_span() + j * m_g.l2_block() + uint64_t(slot - l3) * m_g.page();
                    return true;
                }
            }
        }
    }
    return false; // a table not linked yet: its stores are not live
}

void BbmChecker::leave_pending(const Watched& w, unsigned level, uint64_t va, uint64_t old)
{
    if (!w.live)
        return; // switching TTBR0 flushes the TLB: nothing of it is cached
    if (level == 3) {
        m_pending.push_back({va, m_g.page(), false});
        return;
    }
    if (level == 1) {
        // A level-2 table unlinked (Toll's pmap never does it while live).
        m_pending.push_back({va, m_g.l1_span(), true});
        return;
    }
    if ((old & B::type_mask) == B::type_block) {
        m_pending.push_back({va, m_g.l2_block(), true});
        return;
    }
    // A table: the walk cache may hold it, the TLB any page below it.
    m_pending.push_back({va, m_g.l2_block(), true});
    const uint64_t* l3 = host_table(old, m_g);
    for (unsigned j = 0; j < m_g.entries(); ++j)
        if (valid(l3[j]))
            m_pending.push_back({va + j * m_g.page(), m_g.page(), false});
}

bool BbmChecker::pending_overlaps(uint64_t va, uint64_t length) const
{
    for (const Pending& p : m_pending)
        if (p.va < va + length && va < p.va + p.length)
            return true;
    return false;
}

void BbmChecker::on_store(uint64_t* slot, uint64_t value)
{
    const Watched* w;
    unsigned level;
    uint64_t va;
    if (!locate(slot, &w, &level, &va))
        return;
    uint64_t old = *slot;
    uint64_t mask = m_g.address_mask();
    if (valid(old) && valid(value)) {
        if ((old & mask) != (value & mask) || (old & B::type_mask) != (value & B::type_mask) ||
            (old & B::contiguous) != (value & B::contiguous))
            m_violations.push_back(
                "valid-to-valid change of output address, size or contiguity at va " + hex(va) +
                ": " + hex(old) + " -> " + hex(value));
        return;
    }
    if (valid(old) && !valid(value)) {
        leave_pending(*w, level, va, old);
        return;
    }
    if (valid(value)) {
        uint64_t length = level == 3 ? m_g.page() : level == 2 ? m_g.l2_block() : m_g.l1_span();
        if (pending_overlaps(va, length))
            m_violations.push_back("entry made at va " + hex(va) + " (" + hex(value) +
                                   ") before the TLB was invalidated for the entry it replaced");
    }
}

void BbmChecker::on_tlbi(uint64_t va)
{
    on_tlbi_range(va & ~(m_g.page() - 1), m_g.page());
}

void BbmChecker::on_tlbi_range(uint64_t va, uint64_t length)
{
    m_pending.erase(std::remove_if(m_pending.begin(), m_pending.end(),
                                   [&](const Pending& p) {
                                       bool overlap = p.va < va + length && va < p.va + p.length;
                                       bool covered = p.va >= va && p.va + p.length <= va + length;
                                       return p.any_tlbi_in_range ? overlap : covered;
                                   }),
                    m_pending.end());
}

void BbmChecker::on_tlbi_all()
{
    m_pending.clear();
}

namespace {

void check_level2(uint64_t e, uint64_t base, Arm64Geometry g, std::vector<std::string>& wrong)
{
    uint64_t mask = g.address_mask();
    if (!valid(e))
        return;
    if ((e & B::type_mask) == B::type_block) {
        if ((e & mask) % g.l2_block())
            wrong.push_back("block at " + hex(base) + " maps unaligned " + hex(e & mask));
        if (e & B::contiguous)
            wrong.push_back("block at " + hex(base) + " has the contiguous bit");
        return;
    }
    {
        const uint64_t* l3 = host_table(e, g);
        for (unsigned j = 0; j < g.entries(); ++j)
            if (valid(l3[j]) && (l3[j] & B::type_mask) != B::type_table_or_page)
                wrong.push_back("level-3 entry at " + hex(base + j * g.page()) + " is not a page");
        for (unsigned r = 0; r < g.entries(); r += g.run_pages()) {
            const uint64_t* run = l3 + r;
            uint64_t va = base + r * g.page();
            unsigned marked = 0;
            for (unsigned j = 0; j < g.run_pages(); ++j)
                marked += (run[j] & B::contiguous) != 0;
            if (marked == 0)
                continue;
            if (marked != g.run_pages()) {
                wrong.push_back("run at " + hex(va) + ": only " + std::to_string(marked) + " of " +
                                std::to_string(g.run_pages()) + " entries are contiguous");
                continue;
            }
            if ((run[0] & mask) % g.run_size())
                wrong.push_back("run at " + hex(va) + " maps unaligned " + hex(run[0] & mask));
            uint64_t attributes = run[0] & ~(mask | B::af);
            for (unsigned j = 0; j < g.run_pages(); ++j) {
                if (!valid(run[j]))
                    wrong.push_back("run at " + hex(va) + ": entry " + std::to_string(j) +
                                    " is invalid");
                if ((run[j] & mask) != (run[0] & mask) + j * g.page())
                    wrong.push_back("run at " + hex(va) + ": entry " + std::to_string(j) +
                                    " is not physically contiguous");
                if ((run[j] & ~(mask | B::af)) != attributes)
                    wrong.push_back("run at " + hex(va) + ": entry " + std::to_string(j) +
                                    " has other attributes");
            }
        }
    }
}

} // namespace

std::vector<std::string> check_well_formed(const uint64_t* l1, uint64_t user_limit, Arm64Geometry g)
{
    std::vector<std::string> wrong;
    for (uint64_t k = 0; k < (user_limit - 1) / g.l1_span() + 1; ++k) {
        if (!valid(l1[k]))
            continue;
        if ((l1[k] & B::type_mask) != B::type_table_or_page) {
            wrong.push_back("level-1 entry " + std::to_string(k) + " is not a table");
            continue;
        }
        const uint64_t* l2 = host_table(l1[k], g);
        for (uint64_t i = 0; i < g.entries(); ++i)
            check_level2(l2[i], k * g.l1_span() + i * g.l2_block(), g, wrong);
    }
    return wrong;
}

} // namespace toll::test
