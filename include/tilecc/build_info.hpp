#pragma once
/** @file What was compiled in, for `tilecc info` and bug reports. */
namespace tilecc {
const char* version();
const char* build_flags();
}  // namespace tilecc
