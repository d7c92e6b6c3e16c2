#include "tilecc/scratch.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "tilecc/disk_store.hpp"
#include "tilecc/error.hpp"

namespace tilecc {

ScratchSpace::ScratchSpace(std::string directory, bool keep, std::int64_t resident_limit_bytes)
    : directory_(std::move(directory)), keep_(keep), limit_(resident_limit_bytes) {
  TILECC_CHECK(limit_ >= 0, "a resident limit must be >= 0 bytes, got ", limit_, ".");
}

ScratchSpace::~ScratchSpace() {
  if (made_directory_ && !keep_) {
    std::error_code ignored;  // the files are the stores' and gone with them; the directory is ours
    std::filesystem::remove(directory_, ignored);
  }
}

const std::string& ScratchSpace::directory() {
  std::lock_guard lock(mutex_);
  if (!directory_.empty()) return directory_;
  const char* chosen = std::getenv("TILECC_SCRATCH");
  if (chosen != nullptr && *chosen != '\0') {
    directory_ = chosen;
    return directory_;
  }
  std::string pattern = (std::filesystem::temp_directory_path() / "tilecc-XXXXXX").string();
  TILECC_CHECK(::mkdtemp(pattern.data()) != nullptr, "cannot make a scratch directory under ",
               std::filesystem::temp_directory_path().string(), " (", std::strerror(errno),
               "); give one with --scratch or TILECC_SCRATCH.");
  directory_ = pattern;
  made_directory_ = true;
  return directory_;
}

std::int64_t ScratchSpace::resident() const {
  std::lock_guard lock(mutex_);
  return resident_;
}

std::int64_t ScratchSpace::read_ahead() const {
  std::lock_guard lock(mutex_);
  return read_ahead_;
}

std::int64_t ScratchSpace::high_water() const {
  std::lock_guard lock(mutex_);
  return high_water_;
}

ScratchSpace::Admitted ScratchSpace::admit(DiskStore* store, slot_t slot, std::int64_t bytes,
                                           bool pin) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find({store, slot});
  const bool fresh = it == entries_.end();
  if (fresh) {
    TILECC_CHECK(make_room(bytes), "the memory budget of ", limit_,
                 " bytes cannot hold the disk blocks needed at once (", resident_ + bytes,
                 " bytes); give a budget of at least ", resident_ + bytes, " bytes.");
    it = insert(store, slot, bytes);
  } else if (it->second.pins == 0) {
    lru_.erase(it->second.lru);
  }
  Entry& entry = it->second;
  if (pin) {
    ++entry.pins;
  } else if (entry.pins == 0) {
    entry.lru = lru_.insert(lru_.end(), it->first);  // most recently used
  }
  return fresh ? Admitted::read_in : Admitted::resident;
}

ScratchSpace::Admitted ScratchSpace::admit_ahead(DiskStore* store, slot_t slot,
                                                 std::int64_t bytes) {
  std::lock_guard lock(mutex_);
  if (entries_.contains({store, slot})) return Admitted::resident;
  if (!make_room(bytes)) return Admitted::no_room;
  ++insert(store, slot, bytes)->second.pins;
  read_ahead_ += bytes;
  return Admitted::read_in;
}

std::map<ScratchSpace::Key, ScratchSpace::Entry>::iterator ScratchSpace::insert(
    DiskStore* store, slot_t slot, std::int64_t bytes) {
  const auto it = entries_.emplace(Key{store, slot}, Entry{bytes, 0, lru_.end()}).first;
  resident_ += bytes;
  high_water_ = std::max(high_water_, resident_);
  return it;
}

void ScratchSpace::unpin(DiskStore* store, slot_t slot, bool drop) {
  std::lock_guard lock(mutex_);
  const auto it = entries_.find({store, slot});
  TILECC_CHECK(it != entries_.end() && it->second.pins > 0, "block ", slot,
               " of a disk tensor is released without having been staged.");
  if (--it->second.pins > 0) return;
  if (drop) {
    evict(it, false);
  } else {
    it->second.lru = lru_.insert(lru_.end(), it->first);
  }
}

void ScratchSpace::flush() {
  std::lock_guard lock(mutex_);
  while (!lru_.empty()) evict(entries_.find(lru_.front()), true);
}

void ScratchSpace::forget(DiskStore* store) {
  std::lock_guard lock(mutex_);
  for (auto it = entries_.lower_bound({store, 0}); it != entries_.end() && it->first.first == store;
       it = entries_.erase(it)) {
    if (it->second.pins == 0) lru_.erase(it->second.lru);
    resident_ -= it->second.bytes;
  }
}

bool ScratchSpace::make_room(std::int64_t bytes) {
  if (limit_ == 0) return true;
  while (resident_ + bytes > limit_ && !lru_.empty()) evict(entries_.find(lru_.front()), true);
  return resident_ + bytes <= limit_;
}

void ScratchSpace::evict(std::map<Key, Entry>::iterator it, bool in_lru) {
  const auto [store, slot] = it->first;
  if (in_lru) lru_.erase(it->second.lru);
  resident_ -= it->second.bytes;
  entries_.erase(it);
  store->drop(slot);
}

}  // namespace tilecc
