#pragma once
/** @file WorkQ (paper 003) on one rank: a courier thread fetches the remote blocks of the rank's
 * tasks ahead of its workers and queues the tasks whose blocks have arrived (Q1); the workers
 * take their tasks from that queue, so that a get's latency passes while they compute instead of
 * in front of every task. The courier fetches for as many tasks as the queue has room for at
 * once and completes those gets together, paying the network's latency once for all of them.
 * The workers hand their updates of other ranks' blocks back (Q2, an Outbox), and the courier
 * sends whatever has gathered, together, between its fetches. Every worker gets its first task's
 * blocks itself (the bootstrap get), so that none waits for the courier's first delivery; with
 * role switching, a worker finding Q1 empty gets its next task's blocks itself too. The courier
 * is a thread besides the workers, not one of the rank's compute slots, so it does not switch
 * to computing: once it has nothing left to fetch it ends, and its core is the workers'. */
#include <functional>
#include <span>

#include "tilecc/exec.hpp"
#include "tilecc/outbox.hpp"

namespace tilecc {

/** What the courier does: fetch the blocks some tasks read (into the stores' caches, for fetch()
 *  to find), and let them all go when the run is over. */
struct Courier {
  /** Tasks the courier keeps fetched ahead of the workers at most (Q1's length). */
  int depth = 8;
  std::function<void(std::span<const task_id_t> tasks)> fetch;
  std::function<void()> release;
  /** Points the stores the tasks write at Q2 for the run (null at its end); may be empty. */
  std::function<void(Outbox* outbox)> hand_over;
  /** Role switching: a worker finding Q1 empty fetches its next task's blocks itself instead of
   *  waiting for the courier. */
  bool workers_fetch_when_idle = false;
};

/** Runs the pool's tasks on the executor's workers, in the pool's order, each once its blocks
 *  are fetched by `courier` (a thread of its own), which also sends the updates the workers post
 *  (RunStats::posted_updates counts them); every one is sent when this returns. The courier's
 *  first error stops the run and is rethrown. */
RunStats run_workq(Executor& executor, const TaskPool& pool, const Executor::Body& body,
                   const Courier& courier);

}  // namespace tilecc
