#include "crash_states.h"

#include <algorithm>
#include <cstring>
#include <random>

namespace h5j::explorer {
namespace {

// One incarnation of a file: a create starts a new one.
struct Incarnation {
  MemNode durable;
  std::vector<const Op*> at_device;  // written back: durable at any file's sync (the device's cache flush)
  std::vector<const Op*> pending;    // writes, truncates and xattr changes not yet durable
};

// A write back (sync_file_range) sends the device the writes at the head of
// `pending` that lie within the durable size: those need no metadata to be
// found after a crash.  The first that does not stops it, so that no write
// reaches the device ahead of an earlier one it might overlap.
void write_back(Incarnation& inc) {
  size_t n = 0;
  while (n < inc.pending.size() && inc.pending[n]->kind == Op::kWrite &&
         inc.pending[n]->offset + inc.pending[n]->bytes.size() <= inc.durable.data.size())
    ++n;
  inc.at_device.insert(inc.at_device.end(), inc.pending.begin(), inc.pending.begin() + ptrdiff_t(n));
  inc.pending.erase(inc.pending.begin(), inc.pending.begin() + ptrdiff_t(n));
}

// Any file's sync flushes the device's cache: every write back is durable.
void flush_device(std::vector<Incarnation>& incs) {
  for (Incarnation& inc : incs) {
    for (const Op* op : inc.at_device) apply_to_node(inc.durable, *op);
    inc.at_device.clear();
  }
}

// Makes durable the pending operations a sync covers.
void sync(Incarnation& inc, bool all) {
  std::vector<const Op*> rest;
  for (const Op* op : inc.pending) {
    bool xattr = op->kind == Op::kSetXattr || op->kind == Op::kRemoveXattr;
    if (xattr && !all) rest.push_back(op);
    else apply_to_node(inc.durable, *op);
  }
  inc.pending = std::move(rest);
}

// A write back sends the device whole sectors: a write that starts inside a
// sector rewrites that sector's earlier bytes too, and torn, may leave them
// garbage.  Modelled for the journal, whose format promises that no write
// touches a COMMIT's sector once a sync may have made it durable (format.h,
// FILE LAYOUT), with sectors of 512 bytes: the header's two slots, at 0 and
// 2048, share a sector of 4096.  The HDF5 file's in-place bytes make no such
// promise, nor do sec2's.
bool rewrites_sector_head(const Op& op) { return op.path.ends_with(".jnl"); }
constexpr uint64_t kHeadSector = 512;

void garble_head(MemNode& node, const Op& op, std::mt19937_64& rng) {
  Op head = op;
  head.offset = op.offset / kHeadSector * kHeadSector;
  head.bytes.resize(std::min(op.offset + op.bytes.size(), head.offset + kHeadSector) - head.offset);
  for (auto& b : head.bytes) b = std::byte(rng());
  apply_to_node(node, head);
}

// A write cut at a sector boundary inside it; the rest old, zero or garbage.
// In a journal the sector it starts in may be garbage too (above).
void apply_torn(MemNode& node, const Op& op, std::mt19937_64& rng) {
  if (rewrites_sector_head(op) && op.offset % kHeadSector != 0 && rng() % 2) {
    apply_to_node(node, op);
    return garble_head(node, op, rng);
  }
  uint64_t sector = rng() % 2 ? 512 : 4096;
  uint64_t first = (op.offset / sector + 1) * sector, end = op.offset + op.bytes.size();
  if (first >= end) return apply_to_node(node, op);  // within one sector: written whole or not at all
  uint64_t cuts = (end - 1 - first) / sector + 1;
  uint64_t at = first + (rng() % cuts) * sector;
  Op head = op;
  head.bytes.resize(at - op.offset);
  apply_to_node(node, head);
  int rest = int(rng() % 3);
  if (rest == 0) return;  // old bytes stay
  Op tail = op;
  tail.offset = at;
  tail.bytes.assign(op.bytes.begin() + ptrdiff_t(at - op.offset), op.bytes.end());
  for (auto& b : tail.bytes) b = rest == 1 ? std::byte(0) : std::byte(rng());
  apply_to_node(node, tail);
}

// Which of `pending` reach the disk, and in what order.
std::vector<const Op*> survivors(const std::vector<const Op*>& pending, std::mt19937_64& rng) {
  std::vector<const Op*> out;
  switch (rng() % 3) {
    case 0: {  // in-order writeback, cut anywhere
      size_t n = pending.empty() ? 0 : rng() % (pending.size() + 1);
      out.assign(pending.begin(), pending.begin() + ptrdiff_t(n));
      break;
    }
    case 1:  // any subset, in order
      for (const Op* op : pending)
        if (rng() % 2) out.push_back(op);
      break;
    default:  // any subset, any order
      for (const Op* op : pending)
        if (rng() % 2) out.push_back(op);
      std::shuffle(out.begin(), out.end(), rng);
  }
  return out;
}

}  // namespace

std::string CrashSpec::describe() const {
  return "--cut " + std::to_string(cut) + (everything ? " --everything" : " --crash-seed " + std::to_string(seed));
}

std::vector<size_t> sync_points(const std::vector<Op>& trace) {
  std::vector<size_t> out;
  for (size_t i = 0; i < trace.size(); ++i)
    if (trace[i].is_sync()) out.push_back(i + 1);  // cut just after the sync
  return out;
}

Image materialize(const Image& initial, const std::vector<Op>& trace, const CrashSpec& spec) {
  std::vector<Incarnation> incs;
  std::map<std::string, size_t> durable_ns, live_ns;  // path -> incarnation
  for (const auto& [path, node] : initial) {
    incs.push_back({node, {}, {}});
    durable_ns[path] = live_ns[path] = incs.size() - 1;
  }
  std::vector<std::pair<const Op*, size_t>> ns_pending;  // create/remove, incarnation
  for (size_t i = 0; i < spec.cut && i < trace.size(); ++i) {
    const Op& op = trace[i];
    switch (op.kind) {
      case Op::kCreate:
        incs.push_back({});
        live_ns[op.path] = incs.size() - 1;
        ns_pending.emplace_back(&op, incs.size() - 1);
        break;
      case Op::kRemove:
        ns_pending.emplace_back(&op, live_ns[op.path]);
        live_ns.erase(op.path);
        break;
      case Op::kSyncDir: {
        // Only the synced directory's creates and removes become durable.
        std::string dir = split_directory(op.path).first;
        std::erase_if(ns_pending, [&](const std::pair<const Op*, size_t>& p) {
          if (split_directory(p.first->path).first != dir) return false;
          if (p.first->kind == Op::kCreate) durable_ns[p.first->path] = p.second;
          else durable_ns.erase(p.first->path);
          return true;
        });
        break;
      }
      case Op::kSyncData:
      case Op::kSyncAll:
        flush_device(incs);
        if (live_ns.count(op.path)) sync(incs[live_ns[op.path]], op.kind == Op::kSyncAll);
        break;
      case Op::kWriteBack:
        if (live_ns.count(op.path)) write_back(incs[live_ns[op.path]]);
        break;
      default:
        if (live_ns.count(op.path)) incs[live_ns[op.path]].pending.push_back(&op);
    }
  }
  std::mt19937_64 rng(spec.seed);
  // The namespace: durable entries plus the surviving pending changes, in order.
  std::map<std::string, size_t> ns = durable_ns;
  for (auto& [o, inc] : ns_pending) {
    if (!spec.everything && rng() % 2) continue;
    if (o->kind == Op::kCreate) ns[o->path] = inc;
    else ns.erase(o->path);
  }
  Image out;
  for (const auto& [path, index] : ns) {
    Incarnation& inc = incs[index];
    MemNode node = inc.durable;
    std::vector<const Op*> unflushed = inc.at_device;
    unflushed.insert(unflushed.end(), inc.pending.begin(), inc.pending.end());
    if (spec.everything) {
      for (const Op* op : unflushed) apply_to_node(node, *op);
    } else {
      for (const Op* op : survivors(unflushed, rng)) {
        if (op->kind == Op::kWrite && rng() % 5 == 0) apply_torn(node, *op, rng);
        else apply_to_node(node, *op);
      }
    }
    out[path] = std::move(node);
  }
  return out;
}

}  // namespace h5j::explorer
