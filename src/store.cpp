#include "tilecc/store.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "detail/checked.hpp"
#include "tilecc/disk_store.hpp"
#include "tilecc/error.hpp"
#include "tilecc/mappings.hpp"
#include "tilecc/mpi_store.hpp"

namespace tilecc {
namespace {

// Stores of at least glibc's initial mmap threshold (128 KiB) are mapped from the kernel directly,
// not taken from malloc: glibc raises its threshold to the size of any mapped block freed, after
// which a CC iteration's intermediates (allocated and freed in changing order) come from its
// heap, fragment it, and the process grows from one iteration to the next. Freed mappings go to
// the MappingCache, whence the next iteration's intermediates of the same sizes take them.
constexpr std::size_t mapped_from_bytes = std::size_t{1} << 17;

}  // namespace

void MemoryStore::Free::operator()(double* p) const {
  if (mapped_bytes == 0)
    std::free(p);
  else if (mappings)
    mappings->give(p, mapped_bytes);
  else
    unmap(p, mapped_bytes);
}

// Each block starts on a 64-byte boundary: GEMM and permutation kernels read aligned rows.
constexpr extent_t alignment_doubles = 8;

MemoryStore::MemoryStore(const BlockShape& shape, const StoreResources& resources)
    : BlockStore(shape, resources.traffic), data_(nullptr, Free{}) {
  const std::shared_ptr<MappingCache>& mappings = resources.mappings;
  offsets_.reserve(static_cast<std::size_t>(shape.num_blocks()) + 1);
  offsets_.push_back(0);
  for (slot_t b = 0; b < shape.num_blocks(); ++b) {
    const extent_t size = shape.block_size(b);
    const extent_t padded = detail::checked_product<extent_t>(
        size / alignment_doubles + (size % alignment_doubles != 0 ? 1 : 0), alignment_doubles,
        "a block's padded storage");
    offsets_.push_back(
        detail::checked_sum<extent_t>(offsets_.back(), padded, "a tensor's storage"));
  }
  const auto doubles = static_cast<std::size_t>(offsets_.back());
  // The size is padded to 64 bytes too (aligned_alloc needs a multiple of it).
  const std::size_t bytes =
      detail::checked_sum<std::size_t>(
          detail::checked_product<std::size_t>(std::max<std::size_t>(doubles, 8), sizeof(double),
                                               "a tensor's storage in bytes"),
          63, "a tensor's storage in bytes") /
      64 * 64;
  budget_.emplace(resources.budget, static_cast<std::int64_t>(bytes), "a tensor's blocks");
  if (bytes >= mapped_from_bytes) {
    void* p = mappings ? mappings->take(bytes) : map_zeroed(bytes);
    data_ =
        std::unique_ptr<double[], Free>(static_cast<double*>(p), Free{bytes, std::move(mappings)});
    return;
  }
  void* p = std::aligned_alloc(64, bytes);
  if (p == nullptr) throw OutOfMemory(bytes, "a tensor's blocks");
  std::memset(p, 0, bytes);
  data_ = std::unique_ptr<double[], Free>(static_cast<double*>(p), Free{});
}

const double* MemoryStore::fetch(slot_t slot, ScratchBuffer&) const {
  count_read(Transfer::view, slot);
  return block(slot);
}

double* MemoryStore::writable(slot_t slot) {
  count_write(Transfer::view, slot);
  return block(slot);
}

void MemoryStore::accumulate(slot_t slot, const double* values) {
  count_write(Transfer::copy, slot);
  double* x = block(slot);
  for (extent_t i = 0; i < shape_->block_size(slot); ++i) x[i] += values[i];
}

void MemoryStore::write(slot_t slot, const double* values) {
  count_write(Transfer::copy, slot);
  std::copy_n(values, shape_->block_size(slot), block(slot));
}

NullStore::NullStore(const BlockShape& shape, const StoreResources& resources)
    : BlockStore(shape, resources.traffic),
      budget_(resources.budget,
              detail::checked_product<std::int64_t>(shape.stored_elements(), sizeof(double),
                                                    "a tensor's storage in bytes"),
              "a tensor's blocks") {}

void NullStore::refuse() {
  throw InputError(
      "a tensor of the 'none' store has no blocks (it is for planning a job, not running it); "
      "choose another store to compute.");
}

const double* CopyStore::fetch(slot_t slot, ScratchBuffer& buffer) const {
  count_read(Transfer::copy, slot);
  double* out = buffer.get(shape_->block_size(slot));
  std::copy_n(block(slot), shape_->block_size(slot), out);
  return out;
}

const char* transfer_name(Transfer transfer) {
  switch (transfer) {
    case Transfer::view:
      return "view";
    case Transfer::copy:
      return "copy";
    case Transfer::intra_node:
      return "intra_node";
    case Transfer::inter_node:
      return "inter_node";
    case Transfer::disk_read:
      return "disk_read";
    case Transfer::disk_write:
      return "disk_write";
  }
  return "?";
}

std::size_t TransferCounter::this_thread_shard() {
  static std::atomic<std::size_t> next{0};
  thread_local const std::size_t shard = next.fetch_add(1, std::memory_order_relaxed) % shards;
  return shard;
}

TransferCounter::Totals TransferCounter::totals() const {
  Totals out;
  for (const Shard& shard : shards_)
    for (std::size_t k = 0; k < num_transfers; ++k) {
      out.bytes[k] += shard.bytes[k].load(std::memory_order_relaxed);
      out.calls[k] += shard.calls[k].load(std::memory_order_relaxed);
    }
  return out;
}

void TransferCounter::reset() {
  for (Shard& shard : shards_)
    for (std::size_t k = 0; k < num_transfers; ++k) {
      shard.bytes[k].store(0, std::memory_order_relaxed);
      shard.calls[k].store(0, std::memory_order_relaxed);
    }
}

namespace {

std::map<std::string, StoreFactory>& registry() {
  static std::map<std::string, StoreFactory> stores = [] {
    std::map<std::string, StoreFactory> built;
    built["memory"] = [](const BlockShape& s, const StoreResources& r) {
      return std::make_unique<MemoryStore>(s, r);
    };
    built["copy"] = [](const BlockShape& s, const StoreResources& r) {
      return std::make_unique<CopyStore>(s, r);
    };
    built["none"] = [](const BlockShape& s, const StoreResources& r) {
      return std::make_unique<NullStore>(s, r);
    };
    built["disk"] = [](const BlockShape& s, const StoreResources& r) {
      return std::make_unique<DiskStore>(s, r);
    };
    built["mpi"] = [](const BlockShape& s, const StoreResources& r) {
      TILECC_CHECK(r.comm != nullptr,
                   "the 'mpi' block store spreads blocks over the ranks of a distributed "
                   "runtime; launch tilecc with mpiexec, or choose the 'memory' store.");
      return std::make_unique<MpiStore>(s, r.comm, r);
    };
    return built;
  }();
  return stores;
}

std::mutex registry_mutex;

}  // namespace

void register_store(const std::string& name, StoreFactory factory) {
  std::lock_guard lock(registry_mutex);
  TILECC_CHECK(!name.empty() && factory != nullptr, "a store needs a name and a factory.");
  TILECC_CHECK(registry().emplace(name, std::move(factory)).second, "a store named '", name,
               "' is registered already; choose another name.");
}

std::unique_ptr<BlockStore> make_store(const std::string& name, const BlockShape& shape,
                                       const StoreResources& resources) {
  StoreFactory factory;
  {
    std::lock_guard lock(registry_mutex);
    const auto found = registry().find(name);
    if (found != registry().end()) factory = found->second;
  }
  if (!factory) check_store_name(name);
  return factory(shape, resources);
}

void check_store_name(const std::string& name) {
  const std::vector<std::string> names = store_names();
  TILECC_CHECK(std::find(names.begin(), names.end(), name) != names.end(), "unknown block store '",
               name, "'; registered stores are: ", detail::join(names, ", "), ".");
}

std::vector<std::string> store_names() {
  std::lock_guard lock(registry_mutex);
  std::vector<std::string> names;
  for (const auto& [name, factory] : registry()) names.push_back(name);
  return names;
}

}  // namespace tilecc
