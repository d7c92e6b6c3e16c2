#include "tilecc/build_info.hpp"

namespace tilecc {
const char* version() { return TILECC_VERSION; }
const char* build_flags() { return TILECC_BUILD_FLAGS; }
}  // namespace tilecc
