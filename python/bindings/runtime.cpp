// The BLAS, the kernels and the build, as `tilecc info` and the benchmarks see them.
#include <nanobind/ndarray.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <vector>

#include "bindings.hpp"
#include "tilecc/blas.hpp"
#include "tilecc/build_info.hpp"
#include "tilecc/cost.hpp"
#include "tilecc/error.hpp"
#include "tilecc/kernels/permute.hpp"
#include "tilecc/sched.hpp"
#include "tilecc/trace.hpp"

namespace nb = nanobind;

namespace tilecc::python {
namespace {

// A Python list of axes as the core's Axes, refused unless it is a permutation of 0..n-1.
Axes axes_from(const std::vector<int>& axes, const char* what) {
  const auto rank = static_cast<int>(axes.size());
  TILECC_CHECK(rank <= max_rank, what, ": at most ", max_rank, " axes are supported, got ", rank,
               ".");
  Axes ax{};
  std::vector<bool> seen(axes.size(), false);
  for (std::size_t k = 0; k < axes.size(); ++k) {
    TILECC_CHECK(axes[k] >= 0 && axes[k] < rank, what, ": axis ", axes[k], " is out of range.");
    TILECC_CHECK(!seen[static_cast<std::size_t>(axes[k])], what, ": axis ", axes[k],
                 " is listed twice.");
    seen[static_cast<std::size_t>(axes[k])] = true;
    ax[k] = static_cast<std::int8_t>(axes[k]);
  }
  return ax;
}

using ArrayIn = nb::ndarray<const double, nb::c_contig, nb::device::cpu>;
using ArrayOut = nb::ndarray<double, nb::c_contig, nb::device::cpu>;

// permute(src, axes, alpha, beta, out) with out laid out as src.transpose(axes).
void permute_array(ArrayIn src, const std::vector<int>& axes, double alpha, double beta,
                   ArrayOut out, bool reference) {
  const int rank = static_cast<int>(src.ndim());
  TILECC_CHECK(rank <= max_rank && static_cast<int>(axes.size()) == rank &&
                   static_cast<int>(out.ndim()) == rank,
               "permute: axes must list every axis of the source once, with rank at most ",
               max_rank, ".");
  const Axes ax = axes_from(axes, "permute");
  extent_t extents[max_rank];
  for (int k = 0; k < rank; ++k)
    extents[k] = static_cast<extent_t>(src.shape(static_cast<std::size_t>(k)));
  for (int k = 0; k < rank; ++k)
    TILECC_CHECK(static_cast<extent_t>(out.shape(static_cast<std::size_t>(k))) ==
                     extents[ax[static_cast<std::size_t>(k)]],
                 "permute: the output's shape must be the source's shape permuted by axes.");
  nb::gil_scoped_release release;
  if (reference)
    kernels::permute_reference(rank, extents, ax, alpha, src.data(), beta, out.data());
  else
    kernels::permute(rank, extents, ax, alpha, src.data(), beta, out.data());
}

}  // namespace

void bind_runtime(nb::module_& m) {
  m.def("version", &version);
  m.def("build_flags", &build_flags);
  m.def("permute_kernel_name", &kernels::permute_kernel_name);
  m.def("policy_names", &policy_names);
  m.def("policy_description", &policy_description, nb::arg("name"));
  m.def("clock_seconds", &clock_seconds);
  m.def("phase_names", [] {
    std::vector<std::string> names;
    for (int p = 0; p < num_phases; ++p) names.emplace_back(phase_name(static_cast<Phase>(p)));
    return names;
  });

  nb::class_<CostModel>(m, "CostModel")
      .def(nb::init<>())
      .def_rw("gemm", &CostModel::gemm)
      .def_rw("permute", &CostModel::permute)
      .def("gemm_seconds", &CostModel::gemm_seconds, nb::arg("m"), nb::arg("n"), nb::arg("k"),
           nb::arg("calls") = 1)
      .def(
          "permute_seconds",
          [](const CostModel& model, const std::vector<extent_t>& extents,
             const std::vector<int>& axes) {
            TILECC_CHECK(extents.size() == axes.size(),
                         "permute_seconds: give one axis per extent.");
            return model.permute_seconds(static_cast<int>(axes.size()), extents.data(),
                                         axes_from(axes, "permute_seconds"));
          },
          nb::arg("extents"), nb::arg("axes"));
  m.def(
      "permute_shape",
      [](const std::vector<extent_t>& extents, const std::vector<int>& axes) {
        TILECC_CHECK(extents.size() == axes.size(), "permute_shape: give one axis per extent.");
        const PermuteShape p = permute_shape(static_cast<int>(axes.size()), extents.data(),
                                             axes_from(axes, "permute_shape"));
        return std::make_tuple(static_cast<int>(p.kind), p.elements, p.inner_loops);
      },
      nb::arg("extents"), nb::arg("axes"));
  m.def(
      "time_gemms",
      [](const std::vector<std::array<extent_t, 3>>& shapes, int repeats) {
        nb::gil_scoped_release release;
        return time_gemms(shapes, repeats);
      },
      nb::arg("shapes"), nb::arg("repeats"));
  m.def(
      "time_permutes",
      [](const std::vector<std::pair<std::vector<extent_t>, std::vector<int>>>& cases,
         int repeats) {
        std::vector<std::pair<std::vector<extent_t>, Axes>> converted;
        for (const auto& [extents, axes] : cases) {
          TILECC_CHECK(axes.size() == extents.size(),
                       "time_permutes: each case needs one axis per extent.");
          converted.emplace_back(extents, axes_from(axes, "time_permutes"));
        }
        nb::gil_scoped_release release;
        return time_permutes(converted, repeats);
      },
      nb::arg("cases"), nb::arg("repeats"));
  m.def("cpu_features", &blas::cpu_features);
  m.def("load_blas", [](const std::string& path) { blas::load(path); }, nb::arg("path"));
  m.def("blas_loaded", &blas::loaded);
  m.def("blas_info", [] {
    const blas::Info& i = blas::info();
    nb::dict d;
    d["library"] = i.library;
    d["vendor"] = i.vendor;
    d["core"] = i.core;
    d["config"] = i.config;
    d["core_choice"] = i.core_choice;
    return d;
  });
  m.def(
      "dgemm_gflops",
      [](extent_t n, int threads, int repeats) {
        TILECC_CHECK(n > 0 && threads > 0 && repeats > 0,
                     "dgemm_gflops needs positive n, threads and repeats.");
        blas::ensure_loaded();
        nb::gil_scoped_release release;
        std::vector<double> a(static_cast<std::size_t>(n * n), 0.5), b(a), c(a);
        blas::set_threads(threads);
        blas::gemm(false, false, n, n, n, 1.0, a.data(), n, b.data(), n, 0.0, c.data(), n);
        // Best of the repeats: on a shared machine the best run is the one least disturbed.
        double seconds = 1e300;
        for (int r = 0; r < repeats; ++r) {
          const double t0 = clock_seconds();
          blas::gemm(false, false, n, n, n, 1.0, a.data(), n, b.data(), n, 0.0, c.data(), n);
          seconds = std::min(seconds, clock_seconds() - t0);
        }
        blas::set_threads(1);
        return 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n) /
               seconds * 1e-9;
      },
      nb::arg("n"), nb::arg("threads"), nb::arg("repeats"));
  m.def(
      "permute",
      [](ArrayIn src, const std::vector<int>& axes, double alpha, double beta, ArrayOut out) {
        permute_array(src, axes, alpha, beta, out, false);
      },
      nb::arg("src"), nb::arg("axes"), nb::arg("alpha"), nb::arg("beta"), nb::arg("out"));
  m.def(
      "permute_reference",
      [](ArrayIn src, const std::vector<int>& axes, double alpha, double beta, ArrayOut out) {
        permute_array(src, axes, alpha, beta, out, true);
      },
      nb::arg("src"), nb::arg("axes"), nb::arg("alpha"), nb::arg("beta"), nb::arg("out"));
}

}  // namespace tilecc::python
