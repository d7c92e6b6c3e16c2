#pragma once
/** @file The (T) kernel contract: the energy of one occupied triple, over its non-zero symmetry
 * blocks only.
 *
 * Kernel contract:
 *  - energy(i, j, k, scratch) is one occupied triple's summand; the (T) energy is scale() times
 *    its sum over all (i, j, k). The summand is the same for every ordering of a triple, so the
 *    scheduler computes i <= j <= k only and weights each by its number of distinct orderings;
 *    where it vanishes when two indices coincide (antisymmetric(): the spin-orbital form, two
 *    equal occupied spin orbitals), only i < j < k.
 *  - elements(i, j, k) is the triple's work up to a constant (its stored W elements): the
 *    scheduler's task cost.
 *  - Inputs are read once, through the tensors' stores, when the kernel is made, and repacked;
 *    energy() is const and writes only its scratch (scratch_doubles() of it), so workers may call
 *    it concurrently.
 */
#include "tilecc/types.hpp"

namespace tilecc::kernels {

class TriplesKernel {
 public:
  virtual ~TriplesKernel() = default;
  virtual extent_t occupied() const = 0;
  /** True: the summand is antisymmetric in (i, j, k) and only i < j < k are asked for. */
  virtual bool antisymmetric() const = 0;
  /** The (T) energy over the sum of energy() over all (i, j, k). */
  virtual double scale() const = 0;
  virtual extent_t scratch_doubles() const = 0;
  virtual extent_t elements(extent_t i, extent_t j, extent_t k) const = 0;
  /** Floating-point operations the triple's GEMMs execute (they dominate its work). */
  virtual double flops(extent_t i, extent_t j, extent_t k) const = 0;
  virtual double energy(extent_t i, extent_t j, extent_t k, double* scratch) const = 0;
};

}  // namespace tilecc::kernels
