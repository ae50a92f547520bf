#!/usr/bin/env python3
"""Ground truth for benchmarks/heldout2, written blind; writes each project's LABELS.toml.

Each site names a code snippet instead of a line number: a line of the file must start with the snippet (after its indentation)
(``nth`` picks among several occurrences, 1-based), and the label's line is the line it starts
on. Run from anywhere: ``python benchmarks/heldout2/_gen/labels.py``.
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (file, snippet, nth, rule, bug, why)
SITES = {
    "registry_loaders": [
        ("regload/loaders.py", "futures.append(self.pool.submit(_copy_param, params[name], weight))", 1, "BL001", True,
         "StreamingLoader submits every streamed view and waits only after the stream is exhausted; the streamer refills the buffer meanwhile."),
        ("regload/loaders.py", "futures.append(self.pool.submit(_copy_param, params[name], weight.clone()))", 1, "BL001", False,
         "Each task gets an owned clone made before the iterator advances."),
        ("regload/loaders.py", "fut = self.pool.submit(_copy_param, param, weight)", 1, "BL001", False,
         "concurrent.futures.wait([fut]) and fut.result() run in the same iteration, before the next tensor is requested."),
        ("regload/loaders.py", "inflight.append(self.pool.submit(_copy_param, params[name], weight))", 1, "BL001", True,
         "Tasks are waited only every max_inflight tensors; up to max_inflight-1 earlier views are read after the iterator moved on."),
        ("regload/loaders.py", "futures = [self.pool.submit(_copy_param, params[n], w) for n, w in self.iter_weights(files)]", 1, "BL001", False,
         "vLLM 0.33.0's runai_safetensors_weights_iterator yields tensor.clone(): the tasks get owned tensors."),
    ],
    "async_service": [
        ("aserve/engine.py", "await loop.run_in_executor(_POOL, _install, self._dst(name), tensor)", 1, "BL001", False,
         "The executor future is awaited in the loop body before the iterator advances."),
        ("aserve/engine.py", "pending.append(loop.run_in_executor(None, functools.partial(_install, self._dst(name), tensor)))", 1, "BL001", True,
         "run_in_executor starts the copy on the default executor at once; it is gathered only after the loop, while the streamer refills the buffer."),
        ("aserve/engine.py", "coros.append(asyncio.to_thread(_install, self._dst(name), tensor))", 1, "BL001", True,
         "The to_thread coroutines only start at gather(), after the whole stream was consumed: every view is read after its buffer was reused."),
        ("aserve/engine.py", "fut = loop.run_in_executor(_POOL, _install, self._dst(name), tensor)", 1, "BL001", False,
         "asyncio.wait([fut]) is awaited in the same iteration (it waits for completion and does not cancel)."),
        ("aserve/engine.py", "loop.run_in_executor(_POOL, _install, self._dst(n), t.clone())", 1, "BL001", False,
         "The comprehension hands each task a clone made before the iterator advances."),
        ("aserve/bridge.py", "futs.append(asyncio.run_coroutine_threadsafe(self._apply(name, t), self.loop))", 1, "BL001", True,
         "The coroutine runs later on the other thread's loop; the results are collected only after the stream advanced past every view."),
        ("aserve/bridge.py", "asyncio.run_coroutine_threadsafe(self._apply(name, t), self.loop).result(timeout)", 1, "BL001", False,
         ".result() blocks until the coroutine finished, inside the iteration."),
    ],
    "futures_pipeline": [
        ("fpipe/pipeline.py", "futs = list(map(lambda kv: pool.submit(load_one, params[kv[0]], kv[1]), it))", 1, "BL001", True,
         "list(map(...)) drives the whole stream, submitting every view; as_completed waits only afterwards."),
        ("fpipe/pipeline.py", "by_future = {pool.submit(load_one, params[n], w): n for n, w in runai_safetensors_weights_iterator(files)}", 1, "BL001", True,
         "The dict comprehension submits every view while advancing the iterator; nothing waits inside it."),
        ("fpipe/pipeline.py", "fut = pool.submit(load_one, params[name], w)", 1, "BL001", False,
         "islice only limits the stream; fut.result() waits in the same iteration."),
        ("fpipe/pipeline.py", "futs.append(pool.submit(load_one, param, w))", 1, "BL001", True,
         "zip() advances the streamer every iteration; the tasks are waited only after the loop."),
        ("fpipe/pipeline.py", "futs = [pool.submit(load_one, params[name.replace(\"qkv_proj\", p)], part) for p, part in zip(QKV_PARTS, parts)]", 1, "BL001", False,
         "The three chunk() views are waited (wait(futs)) before the loop asks for the next tensor."),
        ("fpipe/pipeline.py", "pending.append(pool.submit(load_one, params[name.replace(\"qkv_proj\", p)], part))", 1, "BL001", True,
         "chunk() parts are views of the streamed tensor; they are read by the pool after the loop moved on."),
    ],
    "filtered_stream": [
        ("fstream/loader.py", "futs.append(self.executor.submit(self._load, name, t))", 1, "BL001", True,
         "filter_weights/remap_weights re-yield the streamer's views unchanged; results are collected only after the loop."),
        ("fstream/loader.py", "self.executor.submit(self._load, remap_name(name), t)", 1, "BL001", False,
         "owned() yields w.clone(): the tasks get owned tensors."),
        ("fstream/loader.py", "self.executor.submit(self._load, remap_name(name), t)", 2, "BL001", True,
         "reinterpret() yields w.view(dtype), a zero-copy view of the streamed buffer; never waited."),
        ("fstream/loader.py", "self.executor.submit(self._load, name, t)", 1, "BL001", True,
         "load_until submits each view and never waits; the early return only ends the loop, the running tasks still read reused buffers."),
        ("fstream/loader.py", "fut = self.executor.submit(self._load, name, t)", 1, "BL001", False,
         "fut.result() runs before the early return check and before the next iteration."),
    ],
    "sharded_views": [
        ("tpshard/loader.py", "futs.append(self.pool.submit(copy_into, self.params[name], shard))", 1, "BL001", True,
         "narrow() returns a new tensor object without the marker attribute (sglang marks the tensor and its storage), so may_defer(shard), which checks only the tensor attribute, returns True for a CPU view of the streamed buffer."),
        ("tpshard/loader.py", "futs.append(self.pool.submit(copy_into, self.params[name], shard))", 2, "BL001", False,
         "may_defer_shard also checks untyped_storage(), which sglang 0.5.23 marks; views share the storage, so marked shards are copied synchronously."),
        ("tpshard/loader.py", "futs.append(self.pool.submit(copy_into, self.params[name], self._rows(w)))", 1, "BL001", False,
         "The guard is asked about w itself, which carries the marker: may_defer(w) is False for streamed tensors, so this branch never gets one."),
        ("tpshard/loader.py", "futs.append(self.pool.submit(copy_into, self.params[name], shard))", 3, "BL001", True,
         "A column slice is a view of the streamed buffer, waited only after the loop."),
        ("tpshard/loader.py", "futs.append(self.pool.submit(copy_into, self.params[name], self._rows(w).contiguous()))", 1, "BL001", True,
         "A dim-0 narrow of a contiguous tensor is contiguous, so .contiguous() returns the same view (no copy)."),
        ("tpshard/loader.py", "futs.append(self.pool.submit(copy_into, experts[e], expert_w.clone()))", 1, "BL001", False,
         "Each expert slice is cloned before it is handed to the pool."),
        ("tpshard/guards.py", "def may_defer(t: torch.Tensor) -> bool:", 1, "BL002", False,
         "Returns False for any value carrying the marker attribute (through is_streamed)."),
        ("tpshard/guards.py", "def may_defer_shard(t: torch.Tensor) -> bool:", 1, "BL002", False,
         "Checks the marker on the tensor and on its storage first."),
    ],
    "stream_direct": [
        ("rstream/sinks.py", "self.futures.append(self.pool.submit(_assign, self.params[name], tensor))", 1, "BL001", True,
         "PooledSink.__call__ runs inside the streamer loop and queues the view; drain() waits only after the stream ended."),
        ("rstream/sinks.py", "self.pool.submit(_assign, self.params[name], tensor).result()", 1, "BL001", False,
         "The callback blocks on .result() before returning to the streamer loop."),
        ("rstream/sinks.py", "self.params[name].data.copy_(tensor, non_blocking=True)", 1, "BL004", True,
         "Non-blocking H2D copy of a streamer view on a side stream; DeviceSink synchronises only in finish(), after the stream ended."),
        ("rstream/sinks.py", "self.params[name].data.copy_(tensor, non_blocking=True)", 2, "BL004", False,
         "SyncedDeviceSink synchronises the side stream before returning to the streamer loop."),
        ("rstream/load.py", "th = threading.Thread(target=_assign, args=(params[name], tensor), daemon=True)", 1, "BL001", True,
         "A thread per tensor, joined only after stream_into returned: the views are read after the buffer was refilled."),
        ("rstream/load.py", "stream_into(files, lambda n, t: futs.append(pool.submit(_assign, params[n], t.clone())))", 1, "BL001", False,
         "The lambda clones the view before submitting it."),
    ],
    "d2h_sampler": [
        ("d2h/sampler.py", "return host.tolist()", 1, "BL005", True,
         "fetch_async returns a non-blocking D2H copy; tolist() reads it with no synchronisation."),
        ("d2h/sampler.py", "return host.tolist()", 2, "BL005", False,
         "current_stream().synchronize() after the copy, before the read."),
        ("d2h/sampler.py", "return host.tolist()", 3, "BL005", True,
         "The event was recorded before the copy was enqueued; synchronising it does not wait for the copy."),
        ("d2h/sampler.py", "return host.tolist()", 4, "BL005", False,
         "Event recorded after the copy (same stream) and synchronised on the host before the read."),
        ("d2h/sampler.py", "return host.tolist()", 5, "BL005", False,
         "The copy stream is synchronised on the host before the read."),
        ("d2h/sampler.py", "return host.tolist()", 6, "BL005", True,
         "wait_event only orders later device work on the current stream; the host does not wait."),
        ("d2h/sampler.py", "first = int(host[0])", 1, "BL005", True,
         "non_blocking=self.cfg.async_copy (True by default) and int() reads the host tensor right away."),
        ("d2h/sampler.py", "logger.info(f\"step logprobs: {host}\")", 1, "BL005", True,
         "Formatting the tensor reads its values before any synchronisation."),
        ("d2h/sampler.py", "return host.tolist()", 7, "BL005", False,
         ".cpu() is a blocking copy."),
        ("d2h/sampler.py", "return self.pool.submit(self._detokenize, host)", 1, "BL005", True,
         "The worker calls tolist() on the in-flight tensor with no synchronisation."),
        ("d2h/sampler.py", "return self.pool.submit(self._detokenize_after, host, ready)", 1, "BL005", False,
         "The worker synchronises an event recorded after the copy before reading."),
        ("d2h/scheduler.py", "return self.pending.tolist()", 1, "BL005", False,
         "resolve() synchronises the event recorded after the copy."),
        ("d2h/scheduler.py", "return self.pending.tolist()", 2, "BL005", True,
         "run_step calls resolve_eager right after launch: nothing synchronised the copy."),
    ],
    "pinned_staging": [
        ("pstage/upload.py", "self.staging[:n].copy_(chunk)", 1, "BL006", True,
         "The pinned staging buffer is refilled each iteration while the previous non-blocking upload from it may still be reading it."),
        ("pstage/upload.py", "self.staging[:n].copy_(chunk)", 2, "BL006", False,
         "The event recorded after the previous upload is synchronised on the host before the refill."),
        ("pstage/upload.py", "n = f.readinto(view)", 1, "BL006", True,
         "readinto writes the pinned buffer (through its numpy view) while the previous iteration's non-blocking copy may still read it."),
        ("pstage/upload.py", "n = f.readinto(bufs[slot].numpy())", 1, "BL006", False,
         "Two slots, and each slot's event (recorded after its copy) is synchronised before the slot is refilled."),
        ("pstage/upload.py", "n = f.readinto(buf.numpy())", 1, "BL006", False,
         "The buffer is pageable (not pinned): the non-blocking copy stages it before returning."),
        ("pstage/h2d.py", "params[name].data.copy_(w, non_blocking=True)", 1, "BL004", True,
         "Non-blocking copy from a streamed view; the synchronize is after the loop."),
        ("pstage/h2d.py", "params[name].data.copy_(w, non_blocking=True)", 2, "BL004", False,
         "The stream is synchronised in the same iteration, before the iterator advances."),
        ("pstage/h2d.py", "params[name].data = w.to(device, non_blocking=True)", 1, "BL004", True,
         "Non-blocking copy to a CUDA device from a streamed view, synchronised only after the loop."),
    ],
    "guard_module": [
        ("gmod/policy.py", "def can_load_async(w: torch.Tensor) -> bool:", 1, "BL002", False,
         "Checks the marker first."),
        ("gmod/policy.py", "def can_load_async_fast(w: torch.Tensor) -> bool:", 1, "BL002", True,
         "Used as maybe_submit's use_async guard; decides on the device only (through an lru_cache'd helper) and returns True for marked CPU views."),
        ("gmod/policy.py", "def dtype_allows_async(w: torch.Tensor) -> bool:", 1, "BL002", True,
         "Used as a guard in QuantModel; checks device and dtype only."),
        ("gmod/policy.py", "def passes_all_checks(w: torch.Tensor) -> bool:", 1, "BL002", False,
         "all() over the registered checks includes _not_streamed, which is False for marked values."),
        ("gmod/models.py", "maybe_submit(executor, futures, can_load_async(w), default_weight_loader, params[name], w)", 1, "BL001", False,
         "can_load_async rejects marked tensors; maybe_submit runs them inline."),
        ("gmod/models.py", "maybe_submit(executor, futures, should_async_load(w), default_weight_loader, params[name], w)", 1, "BL001", True,
         "sglang 0.5.16's should_async_load (the library's, unfixed) returns True for CPU tensors, marked or not."),
        ("gmod/models.py", "def may_defer(self, w: torch.Tensor) -> bool:", 1, "BL002", False,
         "BaseMoEModel.may_defer checks the marker first."),
        ("gmod/models.py", "def may_defer(self, w: torch.Tensor) -> bool:", 2, "BL002", True,
         "The override in LargeExpertMoEModel drops the marker check; the base loop's self.may_defer(w) runs it for that class."),
    ],
    "rl_weight_sync": [
        ("rlsync/buckets.py", "bucket.tensors.append(w)", 1, "BL003", True,
         "Views are kept in the bucket across iterations until it is full; the earlier ones have been refilled by then."),
        ("rlsync/buckets.py", "self.tensors.append(t)", 1, "BL003", False,
         "Bucket.add is only called with clones (iter_owned_buckets)."),
        ("rlsync/sync.py", "futs.append(self.pool.submit(self.engine.update_weights, bucket.names, bucket.tensors))", 1, "BL001", False,
         "The bucket holds owned clones."),
        ("rlsync/sync.py", "return dict(runai_safetensors_weights_iterator(files))", 1, "BL003", True,
         "dict() materialises the whole stream of views; all but the last point into refilled buffers."),
        ("rlsync/sync.py", "return {n: w.clone() for n, w in runai_safetensors_weights_iterator(files)}", 1, "BL003", False,
         "Each value is cloned while it is current."),
        ("rlsync/sync.py", "th = threading.Thread(target=self.engine.update_weights, args=([name], [w]))", 1, "BL001", False,
         "The thread is joined in the same iteration."),
        ("rlsync/sync.py", "threading.Thread(target=self.engine.update_weights, args=([name], [w]), daemon=True).start()", 1, "BL001", True,
         "Fire-and-forget thread per view, never joined before the iterator advances."),
        ("rlsync/sync.py", "params[name].data = w", 1, "BL003", True,
         "The parameter aliases the streamer's buffer, which is refilled by the next tensors."),
    ],
}


def line_of(path, snippet, nth):
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    hits = [i + 1 for i, text in enumerate(lines) if text.strip().startswith(snippet)]
    if len(hits) < nth:
        sys.exit(f"{path}: snippet found {len(hits)} time(s), wanted #{nth}: {snippet!r}")
    return hits[nth - 1]


def toml_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def main():
    total = bugs = 0
    for project, sites in SITES.items():
        out = [f"# Ground truth for {project} (written blind, 2026-12-06; generated by _gen/labels.py)", ""]
        seen = set()
        for file, snippet, nth, rule, bug, why in sites:
            line = line_of(os.path.join(ROOT, project, file), snippet, nth)
            key = (file, line, rule)
            if key in seen:
                sys.exit(f"duplicate site {key}")
            seen.add(key)
            out += ["[[site]]", f"file = {toml_str(file)}", f"line = {line}", f"rule = {toml_str(rule)}",
                    f"bug = {'true' if bug else 'false'}", f"why = {toml_str(why)}", ""]
            total += 1
            bugs += bug
        with open(os.path.join(ROOT, project, "LABELS.toml"), "w", encoding="utf-8") as fh:
            fh.write("\n".join(out))
    print(f"{total} sites, {bugs} bugs, {total - bugs} safe, in {len(SITES)} projects")


if __name__ == "__main__":
    main()
