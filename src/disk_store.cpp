#include "tilecc/disk_store.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>

#include "detail/checked.hpp"
#include "tilecc/error.hpp"

namespace tilecc {

namespace {

constexpr extent_t alignment_doubles = 8;  // 64-byte block starts, as the memory store's
// Linux's default fault-around window (/sys/kernel/mm/.../fault_around_bytes: 64 KiB).
constexpr extent_t fault_around_doubles = 64 * 1024 / sizeof(double);

std::size_t page_bytes() {
  static const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return page;
}

std::string file_name(const std::string& directory) {
  static std::atomic<std::int64_t> next{0};
  return directory + "/tilecc-" + std::to_string(::getpid()) + "-" +
         std::to_string(next.fetch_add(1)) + ".blocks";
}

}  // namespace

DiskStore::DiskStore(const BlockShape& shape, const StoreResources& resources)
    : BlockStore(shape, resources.traffic), scratch_(resources.scratch) {
  TILECC_CHECK(scratch_ != nullptr,
               "the 'disk' block store keeps blocks in a runtime's scratch directory; make the "
               "tensor through a runtime (or a Context) with store 'disk'.");
  offsets_.reserve(static_cast<std::size_t>(shape.num_blocks()) + 1);
  offsets_.push_back(0);
  // A block of a fault-around window or more starts and ends on window boundaries: a read
  // fault maps the pages around it that the page cache holds, up to the aligned window, and
  // they would be in memory unknown to the scratch space if they were another block's. Blocks
  // of a page or more start and end on pages (when one leaves memory all its pages do); smaller
  // ones are packed, and may keep a neighbour's pages mapped a while.
  const auto page = static_cast<extent_t>(page_bytes() / sizeof(double));
  const extent_t window = fault_around_doubles;
  for (slot_t b = 0; b < shape.num_blocks(); ++b) {
    const extent_t size = shape.block_size(b);
    const extent_t unit = size >= window ? window : size >= page ? page : alignment_doubles;
    const extent_t start = (offsets_.back() + unit - 1) / unit * unit;
    const extent_t padded =
        detail::checked_product<extent_t>((size + unit - 1) / unit, unit, "a block's storage");
    offsets_.back() = start;
    offsets_.push_back(detail::checked_sum<extent_t>(start, padded, "a tensor's storage"));
  }
  mapped_bytes_ = std::max<std::size_t>(
      detail::checked_product<std::size_t>(static_cast<std::size_t>(offsets_.back()),
                                           sizeof(double), "a tensor's storage in bytes"),
      page_bytes());
  const std::string& directory = scratch_->directory();
  path_ = file_name(directory);
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  TILECC_CHECK(fd_ >= 0, "cannot create a scratch file in ", directory, " (", std::strerror(errno),
               "); give --scratch a writable directory.");
  // Reserve the file's space now: a full disk is refused here, not met by a write mid-run.
  const int reserved = ::posix_fallocate(fd_, 0, static_cast<off_t>(mapped_bytes_));
  if (reserved != 0) {
    ::close(fd_);
    ::unlink(path_.c_str());
    TILECC_CHECK(false, "the scratch directory ", directory, " has no room for a tensor of ",
                 mapped_bytes_, " bytes (", std::strerror(reserved),
                 "); free space there or give --scratch another directory.");
  }
  void* p = ::mmap(nullptr, mapped_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (p == MAP_FAILED) {
    const int error = errno;
    ::close(fd_);
    ::unlink(path_.c_str());
    TILECC_CHECK(false, "cannot map a disk tensor's file of ", mapped_bytes_, " bytes (",
                 std::strerror(error), "); raise the process's address-space limit.");
  }
  data_ = static_cast<double*>(p);
  // No read-ahead or fault-around: a fault maps the page asked for, not its neighbours (other
  // blocks, which would be in memory without the scratch space knowing).
  ::madvise(p, mapped_bytes_, MADV_RANDOM);
  changed_ = std::make_unique<std::atomic<bool>[]>(static_cast<std::size_t>(shape.num_blocks()));
  held_ = std::make_unique<std::atomic<int>[]>(static_cast<std::size_t>(shape.num_blocks()));
}

DiskStore::~DiskStore() {
  scratch_->forget(this);
  ::munmap(data_, mapped_bytes_);
  ::close(fd_);
  if (!scratch_->keep()) ::unlink(path_.c_str());
}

double* DiskStore::resident(slot_t slot, bool changing, bool pin) const {
  double* p = at(slot);
  const auto s = static_cast<std::size_t>(slot);
  if (!pin && held_[s].load(std::memory_order_relaxed) > 0) {
    if (changing) changed_[s].store(true, std::memory_order_relaxed);
    return p;
  }
  if (scratch_->admit(const_cast<DiskStore*>(this), slot, bytes(slot), pin) ==
      ScratchSpace::Admitted::read_in)
    read_in(slot);
  if (changing) changed_[s].store(true, std::memory_order_relaxed);
  return p;
}

void DiskStore::read_in(slot_t slot) const {
  count_read(Transfer::disk_read, slot);
  // Read it in now, page by page, so that the read is this one and not a fault mid-task.
  const double* p = at(slot);
  volatile double sink = 0.0;
  const extent_t step = static_cast<extent_t>(page_bytes() / sizeof(double));
  for (extent_t i = 0; i < shape_->block_size(slot); i += step) sink = sink + p[i];
}

void DiskStore::drop(slot_t slot) const {
  if (changed_[static_cast<std::size_t>(slot)].exchange(false, std::memory_order_relaxed))
    count_write(Transfer::disk_write, slot);
  // The whole pages inside the block's storage leave memory (a page it shares with a packed
  // neighbour stays): the file keeps the data, and the next access reads it back.
  const auto page = static_cast<std::uintptr_t>(page_bytes());
  const auto begin = reinterpret_cast<std::uintptr_t>(at(slot));
  const auto end = reinterpret_cast<std::uintptr_t>(at(slot + 1));  // the storage's end
  const std::uintptr_t first = (begin + page - 1) / page * page, last = end / page * page;
  if (last > first)
    ::madvise(reinterpret_cast<void*>(first), static_cast<std::size_t>(last - first),
              MADV_DONTNEED);
}

const double* DiskStore::fetch(slot_t slot, ScratchBuffer&) const {
  const double* p = resident(slot, false, false);
  count_read(Transfer::view, slot);
  return p;
}

double* DiskStore::writable(slot_t slot) {
  double* p = resident(slot, true, false);
  count_write(Transfer::view, slot);
  return p;
}

void DiskStore::accumulate(slot_t slot, const double* values) {
  double* x = resident(slot, true, false);
  count_write(Transfer::copy, slot);
  for (extent_t i = 0; i < shape_->block_size(slot); ++i) x[i] += values[i];
}

void DiskStore::write(slot_t slot, const double* values) {
  double* x = resident(slot, true, false);
  count_write(Transfer::copy, slot);
  std::copy_n(values, shape_->block_size(slot), x);
}

double* DiskStore::block(slot_t slot) { return resident(slot, true, false); }

const double* DiskStore::block(slot_t slot) const { return resident(slot, false, false); }

void DiskStore::stage(std::span<const slot_t> slots) const {
  for (const slot_t slot : slots) {
    resident(slot, false, true);
    held_[static_cast<std::size_t>(slot)].fetch_add(1, std::memory_order_relaxed);
  }
}

BlockStore::Ahead DiskStore::stage_ahead(slot_t slot) const {
  switch (scratch_->admit_ahead(const_cast<DiskStore*>(this), slot, bytes(slot))) {
    case ScratchSpace::Admitted::no_room:
      return Ahead::no_room;
    case ScratchSpace::Admitted::resident:
      return Ahead::not_needed;  // if it is let go before its step, the step reads it again
    case ScratchSpace::Admitted::read_in:
      break;
  }
  read_in(slot);
  held_[static_cast<std::size_t>(slot)].fetch_add(1, std::memory_order_relaxed);
  return Ahead::taken;
}

void DiskStore::release(std::span<const slot_t> slots, bool cache) const {
  for (const slot_t slot : slots) {
    held_[static_cast<std::size_t>(slot)].fetch_sub(1, std::memory_order_relaxed);
    scratch_->unpin(const_cast<DiskStore*>(this), slot, !cache);
  }
}

}  // namespace tilecc
