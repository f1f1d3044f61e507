// The region set of an address space: a sorted list threaded through an AVL
// tree whose nodes remember the largest free gap in their subtree.
#include "kernel/vm/region_tree.h"
#include "kernel/kern/counters.h"

namespace toll::vm {
namespace {

TOLL_COUNTER(g_steps, "vm.regions.steps");

int height(const Region* n)
{
    return n ? n->height : 0;
}

uintptr_t max_gap(const Region* n)
{
    return n ? n->max_gap : 0;
}

/// The free space between @p n and the region before it (or address 0).
uintptr_t gap_below(const Region* n)
{
    return n->start - (n->prev ? n->prev->end : 0);
}

uintptr_t max3(uintptr_t a, uintptr_t b, uintptr_t c)
{
    uintptr_t m = a > b ? a : b;
    return m > c ? m : c;
}

/// Recomputes @p n's height and largest gap from its children.
void update(Region* n)
{
    int l = height(n->left), r = height(n->right);
    n->height = 1 + (l > r ? l : r);
    n->max_gap = max3(gap_below(n), max_gap(n->left), max_gap(n->right));
}

/// Recomputes the largest gaps from @p n up to the root (heights unchanged).
void refresh_up(Region* n)
{
    for (; n; n = n->parent) {
        g_steps.add();
        update(n);
    }
}

} // namespace

Region* RegionTree::find(uintptr_t address) const
{
    for (Region* n = m_root; n;) {
        g_steps.add();
        if (address < n->start)
            n = n->left;
        else if (address >= n->end)
            n = n->right;
        else
            return n;
    }
    return nullptr;
}

Region* RegionTree::first_ending_after(uintptr_t address) const
{
    // Regions are disjoint and sorted, so their ends are sorted too.
    Region* best = nullptr;
    for (Region* n = m_root; n;) {
        g_steps.add();
        if (n->end > address) {
            best = n;
            n = n->left;
        } else {
            n = n->right;
        }
    }
    return best;
}

void RegionTree::replace_child(Region* parent, Region* old_child, Region* new_child)
{
    if (!parent)
        m_root = new_child;
    else if (parent->left == old_child)
        parent->left = new_child;
    else
        parent->right = new_child;
}

Region* RegionTree::rotate_left(Region* x)
{
    Region* y = x->right;
    x->right = y->left;
    if (y->left)
        y->left->parent = x;
    y->parent = x->parent;
    replace_child(x->parent, x, y);
    y->left = x;
    x->parent = y;
    update(x);
    update(y);
    return y;
}

Region* RegionTree::rotate_right(Region* x)
{
    Region* y = x->left;
    x->left = y->right;
    if (y->right)
        y->right->parent = x;
    y->parent = x->parent;
    replace_child(x->parent, x, y);
    y->right = x;
    x->parent = y;
    update(x);
    update(y);
    return y;
}

void RegionTree::rebalance_from(Region* n)
{
    while (n) {
        g_steps.add();
        update(n);
        int balance = height(n->left) - height(n->right);
        if (balance > 1) {
            if (height(n->left->left) < height(n->left->right))
                rotate_left(n->left);
            n = rotate_right(n);
        } else if (balance < -1) {
            if (height(n->right->right) < height(n->right->left))
                rotate_right(n->right);
            n = rotate_left(n);
        }
        n = n->parent;
    }
}

void RegionTree::insert(Region* fresh)
{
    fresh->left = fresh->right = fresh->parent = nullptr;
    fresh->prev = fresh->next = nullptr;
    Region* parent = nullptr;
    bool as_left = false;
    for (Region* n = m_root; n;) {
        g_steps.add();
        parent = n;
        as_left = fresh->start < n->start;
        n = as_left ? n->left : n->right;
    }
    fresh->parent = parent;
    if (!parent) {
        m_root = fresh;
    } else if (as_left) {
        parent->left = fresh; // the parent is the next region up
        fresh->next = parent;
        fresh->prev = parent->prev;
    } else {
        parent->right = fresh; // the parent is the next region down
        fresh->prev = parent;
        fresh->next = parent->next;
    }
    if (fresh->prev)
        fresh->prev->next = fresh;
    else
        m_first = fresh;
    if (fresh->next)
        fresh->next->prev = fresh;
    ++m_count;
    rebalance_from(fresh);
    refresh_up(fresh->next); // its gap below shrank
}

void RegionTree::erase(Region* n)
{
    Region* above = n->next;
    if (n->prev)
        n->prev->next = above;
    else
        m_first = above;
    if (above)
        above->prev = n->prev;
    Region* fix;
    if (n->left && n->right) {
        // The next region up (leftmost of the right subtree, no left child)
        // takes n's place in the tree.
        Region* s = above;
        if (s->parent == n) {
            fix = s;
        } else {
            fix = s->parent;
            fix->left = s->right;
            if (s->right)
                s->right->parent = fix;
            s->right = n->right;
            n->right->parent = s;
        }
        s->left = n->left;
        n->left->parent = s;
        s->parent = n->parent;
        replace_child(n->parent, n, s);
    } else {
        Region* child = n->left ? n->left : n->right;
        if (child)
            child->parent = n->parent;
        replace_child(n->parent, n, child);
        fix = n->parent;
    }
    --m_count;
    n->left = n->right = n->parent = n->next = n->prev = nullptr;
    rebalance_from(fix);
    refresh_up(above); // its gap below grew
}

void RegionTree::end_changed(Region* region)
{
    refresh_up(region->next);
}

Region* RegionTree::last_with_gap(Region* n, uintptr_t limit, uintptr_t length) const
{
    // The highest region starting at or below @p limit with a gap of at least
    // @p length below it. Subtrees without such a gap are skipped whole; only
    // the path along @p limit is walked without that help.
    while (n && n->max_gap >= length) {
        g_steps.add();
        if (n->start > limit) {
            n = n->left;
            continue;
        }
        if (Region* up = last_with_gap(n->right, limit, length))
            return up;
        if (gap_below(n) >= length)
            return n;
        n = n->left;
    }
    return nullptr;
}

Optional<uintptr_t> RegionTree::find_hole(size_t length, uintptr_t floor, uintptr_t ceiling,
                                          uintptr_t align) const
{
    uintptr_t mask = ~(align - 1);
    uintptr_t need = length + (align - 1); // a gap this big holds an aligned start
    if (length == 0 || need < length || ceiling < floor || ceiling - floor < need)
        return {};
    // The highest region starting below the ceiling.
    Region* top = nullptr;
    for (Region* n = m_root; n;) {
        g_steps.add();
        if (n->start < ceiling) {
            top = n;
            n = n->right;
        } else {
            n = n->left;
        }
    }
    if (!top || (top->end <= ceiling && ceiling - top->end >= need))
        return (ceiling - length) & mask; // free from the top region (or floor) up
    Region* below = last_with_gap(m_root, top->start, need);
    if (!below || below->start - need < floor)
        return {};
    return (below->start - length) & mask;
}

bool RegionTree::check() const
{
    size_t count = 0;
    Region* prev = nullptr;
    for (Region* r = m_first; r; r = r->next) {
        if (r->prev != prev || r->start >= r->end || (prev && prev->end > r->start))
            return false;
        if (++count > m_count)
            return false;
        prev = r;
    }
    if (count != m_count || (m_root && m_root->parent))
        return false;
    // Every node: children link back, order, height, balance and gap agree.
    struct Walk {
        static bool node(const Region* n, int* h, uintptr_t* gap)
        {
            if (!n) {
                *h = 0;
                *gap = 0;
                return true;
            }
            int lh, rh;
            uintptr_t lg, rg;
            if ((n->left && (n->left->parent != n || n->left->start >= n->start)) ||
                (n->right && (n->right->parent != n || n->right->start <= n->start)))
                return false;
            if (!node(n->left, &lh, &lg) || !node(n->right, &rh, &rg))
                return false;
            int balance = lh - rh;
            *h = 1 + (lh > rh ? lh : rh);
            *gap = max3(gap_below(n), lg, rg);
            return n->height == *h && balance >= -1 && balance <= 1 && n->max_gap == *gap;
        }
    };
    int h;
    uintptr_t gap;
    return Walk::node(m_root, &h, &gap);
}

} // namespace toll::vm
