// The disk store: blocks in a scratch file, resident under the scratch space's limit; what
// becomes resident is read (counted), a changed block leaving is written (counted), the least
// recently used unpinned block leaves first, staged blocks stay until released, a pinned set over
// the limit is refused, and the file goes with the store.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "test_shapes.hpp"
#include "tilecc/disk_store.hpp"
#include "tilecc/error.hpp"
#include "tilecc/mem.hpp"

namespace tilecc {
namespace {

using testing::shape;
using testing::space;

struct DiskFixture : ::testing::Test {
  // 4 x 4 blocks of 4 x 4 doubles (128 bytes each); room for 3 of them.
  ShapePtr s = shape({space(16, 4, 1), space(16, 4, 1)});
  std::string directory = (std::filesystem::temp_directory_path() / "tilecc-disk-test").string();
  std::shared_ptr<ScratchSpace> scratch;
  void SetUp() override {
    std::filesystem::create_directories(directory);
    scratch = std::make_shared<ScratchSpace>(directory, false, 3 * 128);
  }
  void TearDown() override { std::filesystem::remove_all(directory); }
  static std::int64_t bytes(const DiskStore& d, Transfer t) {
    return d.transfers().totals().bytes[static_cast<std::size_t>(t)];
  }
};

TEST_F(DiskFixture, ReadsWhatBecomesResidentAndWritesWhatLeavesChanged) {
  auto store = std::make_unique<DiskStore>(*s, StoreResources{{}, {}, {}, {}, scratch});
  const std::string path = store->path();
  EXPECT_TRUE(std::filesystem::exists(path));
  std::vector<double> values(16, 2.5);
  for (slot_t b = 0; b < 4; ++b) store->write(b, values.data());  // the 4th evicts block 0
  EXPECT_EQ(bytes(*store, Transfer::disk_read), 4 * 128);
  EXPECT_EQ(bytes(*store, Transfer::disk_write), 128);
  EXPECT_EQ(scratch->resident(), 3 * 128);
  ScratchBuffer buffer;
  EXPECT_EQ(store->fetch(0, buffer)[5], 2.5);  // read back from the file; evicts block 1
  EXPECT_EQ(bytes(*store, Transfer::disk_read), 5 * 128);
  EXPECT_EQ(bytes(*store, Transfer::disk_write), 2 * 128);
  scratch->flush();  // blocks 2 and 3 changed, block 0 only read
  EXPECT_EQ(bytes(*store, Transfer::disk_write), 4 * 128);
  EXPECT_EQ(scratch->resident(), 0);
  EXPECT_EQ(scratch->high_water(), 3 * 128);
  store.reset();
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST_F(DiskFixture, StagedBlocksStayUntilReleasedAndAPinnedSetOverTheLimitIsRefused) {
  DiskStore store(*s, StoreResources{{}, {}, {}, {}, scratch});
  const std::vector<slot_t> held{0, 1};
  store.stage(held);
  ScratchBuffer buffer;
  for (slot_t b = 2; b < 8; ++b) store.fetch(b, buffer);  // one unpinned block at a time
  EXPECT_EQ(bytes(store, Transfer::disk_read), 8 * 128);
  store.fetch(0, buffer);  // still resident: no read
  EXPECT_EQ(bytes(store, Transfer::disk_read), 8 * 128);
  const std::vector<slot_t> more{8, 9};
  try {
    store.stage(more);  // 0, 1, 8 pinned fit; 9 does not
    FAIL() << "a pinned set over the limit was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("give a budget of at least 512 bytes"), std::string::npos)
        << e.what();
  }
  store.release(held);
  EXPECT_EQ(scratch->resident(), 128);  // block 8, still staged
}

TEST_F(DiskFixture, AScratchDirectoryThatCannotTakeFilesIsOneSentence) {
  auto nowhere = std::make_shared<ScratchSpace>(directory + "/missing", false, 0);
  try {
    DiskStore store(*s, StoreResources{{}, {}, {}, {}, nowhere});
    FAIL() << "a file was made in a missing directory";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("give --scratch a writable directory"), std::string::npos);
  }
}

}  // namespace
}  // namespace tilecc
