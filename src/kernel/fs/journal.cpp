// The JBD2 journal's writer (see journal.h): transactions of metadata
// blocks, each committed as descriptor, blocks and commit block, then
// checkpointed home at once, so the log never holds more than one.
#include "kernel/fs/journal.h"
#include "kernel/fs/ext2_internal.h"
#include "kernel/kern/console.h"
#include "kernel/kern/counters.h"
#include "kernel/vm/kmalloc.h"
#include "lib/string.h"

namespace toll::fs {

using namespace jbd2;

namespace {

TOLL_COUNTER(g_commits, "jbd2.commits");
TOLL_COUNTER(g_logged, "jbd2.blocks_logged");
TOLL_COUNTER(g_overflows, "jbd2.overflows");

uint32_t be32(const uint8_t* p)
{
    return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
}

void put_be32(uint8_t* p, uint32_t v)
{
    p[0] = static_cast<uint8_t>(v >> 24);
    p[1] = static_cast<uint8_t>(v >> 16);
    p[2] = static_cast<uint8_t>(v >> 8);
    p[3] = static_cast<uint8_t>(v);
}

void put_be16(uint8_t* p, uint16_t v)
{
    p[0] = static_cast<uint8_t>(v >> 8);
    p[1] = static_cast<uint8_t>(v);
}

void put_header(uint8_t* block, uint32_t type, uint32_t sequence)
{
    put_be32(block, k_magic);
    put_be32(block + 4, type);
    put_be32(block + 8, sequence);
}

Errno journal_write(Ext2Fs& fs, uint32_t index, const uint8_t* data)
{
    Journal& j = *fs.journal;
    if (index >= j.maxlen)
        return k_enospc;
    uint32_t per = fs.block_size / static_cast<uint32_t>(k_sector_size);
    return block_io(*fs.device, uint64_t(j.map[index]) * per, per, const_cast<uint8_t*>(data),
                    true);
}

Errno refuse(Ext2Fs& fs, const char* why)
{
    kprintf("ext3: %s: not mounted: its journal %s\n", fs.device->name, why);
    return k_einval;
}

// Tags that fit one descriptor block: the first carries the UUID.
size_t tags_per_descriptor(const Ext2Fs& fs)
{
    const Journal& j = *fs.journal;
    return 1 + (fs.block_size - k_header_size - j.tag_size - k_uuid_size) / j.tag_size;
}

} // namespace

Errno journal_open(Ext2Fs& fs)
{
    ext2::Inode in;
    uint32_t ino = fs.sb.s_journal_inum;
    if (ino == 0 || ino >= fs.first_ino)
        return refuse(fs, "inode number is out of range");
    TRY(inode_read(fs, ino, &in));
    uint64_t blocks = inode_size(in) / fs.block_size;
    if (blocks < 16 || blocks > (1u << 20))
        return refuse(fs, "size is out of range");
    Journal* j = make<Journal>();
    if (!j)
        return k_enomem;
    j->map = static_cast<uint32_t*>(vm::kmalloc(blocks * sizeof(uint32_t)));
    j->super = static_cast<uint8_t*>(vm::kmalloc(fs.block_size));
    j->scratch = static_cast<uint8_t*>(vm::kmalloc(fs.block_size));
    if (!j->map || !j->super || !j->scratch)
        return k_enomem; // (a failed mount keeps what it took)
    for (uint32_t i = 0; i < blocks; ++i) {
        TRY(bmap(fs, in, ino, i, false, &j->map[i]));
        if (j->map[i] == 0)
            return refuse(fs, "has a hole");
    }
    j->maxlen = static_cast<uint32_t>(blocks);
    fs.journal = j;
    uint32_t per = fs.block_size / static_cast<uint32_t>(k_sector_size);
    TRY(block_io(*fs.device, uint64_t(j->map[0]) * per, per, j->super, false));
    uint32_t type = be32(j->super + 4);
    if (be32(j->super) != k_magic || (type != k_superblock_v1 && type != k_superblock_v2))
        return refuse(fs, "superblock is not JBD2's");
    if (be32(j->super + k_sb_blocksize) != fs.block_size)
        return refuse(fs, "block size differs from the file system's");
    uint32_t maxlen = be32(j->super + k_sb_maxlen), first = be32(j->super + k_sb_first);
    if (maxlen > j->maxlen || maxlen < 16 || first == 0 || first >= maxlen)
        return refuse(fs, "geometry does not fit its inode");
    if (type == k_superblock_v2) {
        if (be32(j->super + k_sb_feature_compat) != 0 ||
            be32(j->super + k_sb_feature_ro_compat) != 0 ||
            (be32(j->super + k_sb_feature_incompat) & ~(k_incompat_revoke | k_incompat_64bit)))
            return refuse(fs, "uses checksums or other features Toll does not write");
        if (be32(j->super + k_sb_feature_incompat) & k_incompat_64bit)
            j->tag_size = k_tag64_size;
        memcpy(j->uuid, j->super + k_sb_uuid, k_uuid_size);
    }
    if (be32(j->super + k_sb_start) != 0)
        return refuse(fs, "holds transactions to replay (run e2fsck)");
    j->maxlen = maxlen;
    j->first = first;
    j->sequence = be32(j->super + k_sb_sequence);
    size_t per_descriptor = tags_per_descriptor(fs);
    size_t fits = (maxlen - first - 1) * per_descriptor / (per_descriptor + 1) - 1;
    j->capacity = fits < k_bcache_buffers / 4 ? fits : k_bcache_buffers / 4;
    j->tx = static_cast<Buffer**>(vm::kmalloc(j->capacity * sizeof(uintptr_t)));
    if (!j->tx)
        return k_enomem;
    // While mounted the file system may hold a transaction to replay: say so
    // in the superblock now (it has no other change yet).
    fs.sb.s_feature_incompat |= ext2::k_incompat_recover;
    memcpy(fs.super_buffer->data + fs.super_offset, &fs.sb, sizeof fs.sb);
    bdirty(fs.super_buffer);
    TRY(bwrite(fs.super_buffer));
    kprintf("ext3: %s: journal of %u blocks (inode %u), transactions of up to %zu blocks\n",
            fs.device->name, maxlen, ino, j->capacity);
    return k_ok;
}

void mdirty(Ext2Fs& fs, Buffer* b)
{
    bdirty(b);
    if (!fs.journal || b->journaled)
        return;
    Journal& j = *fs.journal;
    if (j.count == j.capacity) {
        g_overflows.add(); // written home unjournaled: this operation is not atomic
        return;
    }
    b->journaled = true;
    ++b->refs; // the transaction's: the block cannot be evicted (written home) early
    j.tx[j.count++] = b;
}

bool journal_wants_commit(const Ext2Fs& fs, unsigned fraction)
{
    return fs.journal && fs.journal->count > fs.journal->capacity / fraction;
}

Errno journal_commit(Ext2Fs& fs)
{
    if (!fs.journal)
        return bsync(*fs.device);
    Journal& j = *fs.journal;
    // Ordered mode: the data the new metadata points at reaches the disk first.
    TRY(bsync_data(*fs.device));
    if (j.count == 0)
        return k_ok;
    // The journal superblock names where the log starts and its first sequence.
    put_be32(j.super + k_sb_start, j.first);
    put_be32(j.super + k_sb_sequence, j.sequence);
    TRY(journal_write(fs, 0, j.super));
    uint32_t pos = j.first;
    size_t per_descriptor = tags_per_descriptor(fs);
    for (size_t i = 0; i < j.count;) {
        size_t n = j.count - i < per_descriptor ? j.count - i : per_descriptor;
        memset(j.scratch, 0, fs.block_size);
        put_header(j.scratch, k_descriptor_block, j.sequence);
        size_t at = k_header_size;
        for (size_t k = 0; k < n; ++k) {
            Buffer* b = j.tx[i + k];
            uint16_t flags = k == 0 ? 0 : k_flag_same_uuid;
            if (be32(b->data) == k_magic)
                flags |= k_flag_escape;
            if (k + 1 == n)
                flags |= k_flag_last_tag;
            put_be32(j.scratch + at, b->block);
            put_be16(j.scratch + at + 6, flags);
            at += j.tag_size;
            if (k == 0) {
                memcpy(j.scratch + at, j.uuid, k_uuid_size);
                at += k_uuid_size;
            }
        }
        TRY(journal_write(fs, pos++, j.scratch));
        for (size_t k = 0; k < n; ++k) {
            Buffer* b = j.tx[i + k];
            const uint8_t* data = b->data;
            if (be32(b->data) == k_magic) {
                // Escaped: the log's copy must not look like a journal block.
                memcpy(j.scratch, b->data, fs.block_size);
                put_be32(j.scratch, 0);
                data = j.scratch;
            }
            TRY(journal_write(fs, pos++, data));
            g_logged.add();
        }
        i += n;
    }
    memset(j.scratch, 0, fs.block_size);
    put_header(j.scratch, k_commit_block, j.sequence);
    uint32_t now = ext2_now(fs);
    put_be32(j.scratch + k_commit_sec + 4, now);
    TRY(journal_write(fs, pos++, j.scratch));
    g_commits.add();
    // Committed: now the blocks go home, and the log is empty again.
    for (size_t k = 0; k < j.count; ++k) {
        Buffer* b = j.tx[k];
        TRY(bwrite(b));
        b->journaled = false;
        brelse(b);
    }
    j.count = 0;
    put_be32(j.super + k_sb_start, 0);
    put_be32(j.super + k_sb_sequence, ++j.sequence);
    return journal_write(fs, 0, j.super);
}

Errno journal_close(Ext2Fs& fs)
{
    if (!fs.journal)
        return bsync(*fs.device);
    fs.sb.s_feature_incompat &= ~ext2::k_incompat_recover;
    super_dirty(fs);
    return journal_commit(fs);
}

} // namespace toll::fs
