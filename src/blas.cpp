#include "tilecc/blas.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <vector>

#include "detail/checked.hpp"
#include "tilecc/error.hpp"

namespace tilecc::blas {
namespace {

using blas_int = int;  // LP64 interface: scipy-openblas32, MKL's default, reference BLAS
using dgemm_fn = void (*)(const char*, const char*, const blas_int*, const blas_int*,
                          const blas_int*, const double*, const double*, const blas_int*,
                          const double*, const blas_int*, const double*, double*, const blas_int*);
using set_threads_fn = void (*)(int);
using string_fn = char* (*)();

struct Library {
  void* handle = nullptr;
  dgemm_fn dgemm = nullptr;
  set_threads_fn set_threads = nullptr;
  Info info;
};

Library& library() {
  static Library lib;
  return lib;
}
std::mutex load_mutex;

void* find(void* handle, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (void* p = dlsym(handle, n)) return p;
  return nullptr;
}

bool has_avx512() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
}

bool has_avx2_fma() { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }

// Choose OpenBLAS's kernel set from the CPU's features before the library initialises (it reads
// OPENBLAS_CORETYPE once, when loaded; so does the older OpenBLAS PySCF bundles, which loads
// later in the same process and runs the integral transformation). The SkylakeX DGEMM kernels
// are OpenBLAS's AVX-512 ones and the fastest it has for any AVX-512 CPU (Cooper Lake and
// Sapphire Rapids add only BF16 kernels); the Haswell ones are its AVX2+FMA kernels, the ones its
// Zen targets use too. By family, OpenBLAS's detection falls back to generic SSE2 kernels on CPUs
// newer than the library (PySCF's OpenBLAS 0.3.3 on AMD Zen 3 takes Barcelona's, at half the
// rate), so the features decide.
std::string choose_openblas_core() {
  if (const char* user = std::getenv("OPENBLAS_CORETYPE"); user && *user)
    return std::string("OPENBLAS_CORETYPE=") + user + " set by the user";
  if (has_avx512()) {
    setenv("OPENBLAS_CORETYPE", "SkylakeX", 0);
    return "SkylakeX (AVX-512) chosen by tilecc from the CPU's avx512f/dq/bw/vl flags";
  }
  if (has_avx2_fma()) {
    setenv("OPENBLAS_CORETYPE", "Haswell", 0);
    return "Haswell (AVX2+FMA) chosen by tilecc from the CPU's avx2/fma flags";
  }
  return "OpenBLAS's own CPU detection (neither AVX-512 nor AVX2+FMA on this CPU)";
}

}  // namespace

void load(const std::string& path) {
  std::lock_guard lock(load_mutex);
  Library& lib = library();
  if (lib.handle != nullptr) {
    TILECC_CHECK(lib.info.library == path, "a BLAS is already loaded (", lib.info.library,
                 "); one process can use only one BLAS, so start a new process to use ", path, ".");
    return;
  }
  const bool openblas = path.find("openblas") != std::string::npos;
  std::string choice = openblas ? choose_openblas_core() : "the library's own CPU dispatch";
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  TILECC_CHECK(h != nullptr, "cannot load the BLAS library ", path, " (", dlerror(),
               "); reinstall tilecc's dependencies or point TILECC_BLAS_LIBRARY at a BLAS.");
  auto dgemm = reinterpret_cast<dgemm_fn>(find(h, {"scipy_dgemm_", "dgemm_", "dgemm"}));
  if (dgemm == nullptr) {
    dlclose(h);
    TILECC_CHECK(false, "the library ", path,
                 " has no dgemm_, so it is not a BLAS; point"
                 " TILECC_BLAS_LIBRARY at a BLAS library.");
  }
  lib.handle = h;
  lib.dgemm = dgemm;
  lib.set_threads = reinterpret_cast<set_threads_fn>(
      find(h, {"scipy_openblas_set_num_threads", "openblas_set_num_threads", "MKL_Set_Num_Threads",
               "bli_thread_set_num_threads"}));
  lib.info.library = path;
  lib.info.core_choice = std::move(choice);
  if (auto core = reinterpret_cast<string_fn>(
          find(h, {"scipy_openblas_get_corename", "openblas_get_corename"}))) {
    lib.info.vendor = "OpenBLAS";
    lib.info.core = core();
    if (auto cfg = reinterpret_cast<string_fn>(
            find(h, {"scipy_openblas_get_config", "openblas_get_config"})))
      lib.info.config = cfg();
  } else if (find(h, {"MKL_Set_Num_Threads"}) != nullptr) {
    lib.info.vendor = "MKL";
    lib.info.core = "MKL dispatch";
  } else {
    lib.info.vendor = "BLAS";
  }
}

bool loaded() { return library().handle != nullptr; }

void ensure_loaded() {
  if (loaded()) return;
  const char* path = std::getenv("TILECC_BLAS_LIBRARY");
  TILECC_CHECK(path != nullptr && *path,
               "no BLAS is loaded; import tilecc from Python, or set"
               " TILECC_BLAS_LIBRARY to the path of a BLAS shared library.");
  load(path);
}

const Info& info() { return library().info; }

void gemm(bool trans_a, bool trans_b, extent_t m, extent_t n, extent_t k, double alpha,
          const double* a, extent_t lda, const double* b, extent_t ldb, double beta, double* c,
          extent_t ldc) {
  if (m == 0 || n == 0) return;
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the operands.
  const char ta = trans_a ? 'T' : 'N', tb = trans_b ? 'T' : 'N';
  const auto im = detail::checked_narrow<blas_int>(m, "a GEMM's m"),
             in = detail::checked_narrow<blas_int>(n, "a GEMM's n"),
             ik = detail::checked_narrow<blas_int>(k, "a GEMM's k"),
             ilda = detail::checked_narrow<blas_int>(lda, "a GEMM's lda"),
             ildb = detail::checked_narrow<blas_int>(ldb, "a GEMM's ldb"),
             ildc = detail::checked_narrow<blas_int>(ldc, "a GEMM's ldc");
  library().dgemm(&tb, &ta, &in, &im, &ik, &alpha, b, &ildb, a, &ilda, &beta, c, &ildc);
}

void set_threads(int n) {
  if (library().set_threads != nullptr) library().set_threads(n);
}

std::string cpu_features() {
  // __builtin_cpu_supports takes only string literals, hence one line per feature.
  std::vector<std::string> found;
  auto add = [&](bool has, const char* name) {
    if (has) found.emplace_back(name);
  };
  add(__builtin_cpu_supports("avx512f"), "avx512f");
  add(__builtin_cpu_supports("avx512dq"), "avx512dq");
  add(__builtin_cpu_supports("avx512bw"), "avx512bw");
  add(__builtin_cpu_supports("avx512vl"), "avx512vl");
  add(__builtin_cpu_supports("avx2"), "avx2");
  add(__builtin_cpu_supports("fma"), "fma");
  return found.empty() ? std::string("none detected") : detail::join(found, " ");
}

}  // namespace tilecc::blas
