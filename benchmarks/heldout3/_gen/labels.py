#!/usr/bin/env python3
"""Write every project's LABELS.toml from code snippets (each must occur once in its file).

Usage: python benchmarks/heldout3/_gen/labels.py
"""
import os
import sys

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
B, S = True, False  # bug, safe twin

# project -> [(file, unique snippet on the labelled line, rule, bug, why)]
LABELS = {}

LABELS["pool_hierarchy"] = [
    ("hloader/guards.py", "def may_defer(", "BL002", S,
     "Returns False for any tensor carrying a marker of the tuple (any() over getattr), before the device test."),
    ("hloader/guards.py", "def is_large_cpu(", "BL002", B,
     "Used as use_async= switch for streamed views in load_moe; decides on device and size only, so a marked view goes to the pool."),
    ("hloader/loaders.py", "    def can_defer(self, weight: torch.Tensor) -> bool:\n        try:", "BL002", S,
     "EAFP marker read: a marked view returns not True = False; unmarked tensors raise AttributeError and return True."),
    ("hloader/loaders.py", "    def can_defer(self, weight: torch.Tensor) -> bool:\n        return weight.is_contiguous()", "BL002", B,
     "Override of the guard method used by the base's loop; returns True for any contiguous tensor, streamed views included."),
    ("hloader/loaders.py", "    def can_defer(self, weight: torch.Tensor) -> bool:\n        if not super()", "BL002", S,
     "Delegates to the base's marker check first, then adds a size threshold."),
    ("hloader/loaders.py", "use_async=may_defer(w)))", "BL001", S,
     "The switch is a correct guard: marked views are copied inline."),
    ("hloader/loaders.py", "            inflight.append(pool.submit(_copy, params[name].data, w))\n        else:\n            _copy(params[name].data, w)\n    for fut", "BL001", B,
     "Expert tensors (streamed views) are submitted and only waited for after the whole stream; the streamer refills the buffer meanwhile."),
    ("hloader/loaders.py", "        if may_defer(w) or name.endswith(\".bias\"):\n            >>inflight.append(pool.submit(_copy, params[name].data, w))", "BL001", B,
     "The guard is or-ed with a name test, so a marked .bias view is submitted and waited for only after the loop."),
    ("hloader/loaders.py", "        fut = pool.submit(_copy, params[name].data, w)", "BL001", S,
     "The future is waited for (result) in the same iteration, before the iterator advances."),
    ("hloader/loaders.py", "w.clone()) for n, w in runai", "BL001", S,
     "Each task gets an owned clone made before the iterator advances."),
    ("hloader/loaders.py", "list(pool.map(lambda kv", "BL001", B,
     "Executor.map queues every element of the stream up front: every task reads a view the streamer has since refilled."),
]

LABELS["async_reload"] = [
    ("areload/service.py", "await loop.run_in_executor(self.pool, assign", "BL001", S,
     "Awaited in the same iteration: the worker has copied the view before the iterator advances."),
    ("areload/service.py", "pending.append(loop.run_in_executor(", "BL001", B,
     "Futures are gathered only after the whole stream; each worker reads a view the streamer has refilled."),
    ("areload/service.py", "tasks.add(asyncio.create_task(asyncio.to_thread(", "BL001", B,
     "Tasks started per view run on threads later and are awaited only after the loop."),
    ("areload/service.py", "tg.create_task(asyncio.to_thread(assign", "BL001", S,
     "A TaskGroup per step: its exit awaits the task before the next element is requested."),
    ("areload/service.py", "coros = [asyncio.to_thread(assign, self.params[n], w.clone())", "BL001", S,
     "Each coroutine holds an owned clone."),
    ("areload/service.py", "self.queue.put_nowait((name, w))", "BL001", B,
     "The queue's consumer (drain) reads the view later, after the streamer refilled it."),
    ("areload/service.py", "await self.queue.put((name, w.detach().clone()))", "BL001", S,
     "An owned clone goes on the queue."),
    ("areload/bridge.py", "fut = asyncio.run_coroutine_threadsafe(sink.put_weight(name, w), loop)", "BL001", S,
     "The loader thread blocks on fut.result() before advancing the iterator."),
    ("areload/bridge.py", "        asyncio.run_coroutine_threadsafe(sink.put_weight(name, w), loop)\n\n", "BL001", B,
     "The coroutine runs later on the event loop; the loader thread advances the stream at once."),
]

LABELS["device_upload"] = [
    ("devup/upload.py", "            self.params[name].data.copy_(w, non_blocking=True)\n        torch.cuda.synchronize()", "BL004", B,
     "Non-blocking H2D copy from a streamed view; the only synchronize is after the loop."),
    ("devup/upload.py", "            self.params[name].data.copy_(w, non_blocking=True)\n            torch.cuda.current_stream().synchronize()", "BL004", S,
     "The current stream is synchronised on the host in the same iteration."),
    ("devup/upload.py", "                self.params[name].data.copy_(w, non_blocking=True)\n            torch.cuda.current_stream().wait_stream", "BL004", B,
     "wait_stream orders device work only; the host advances the iterator while the side-stream copy still reads the view."),
    ("devup/upload.py", "                self.params[name].data.copy_(w, non_blocking=True)\n            self.copy_stream.synchronize()", "BL004", S,
     "The side stream is synchronised on the host before the next element."),
    ("devup/upload.py", "staged = w.to(self.cfg.device, non_blocking=True)", "BL004", S,
     "An event recorded after the copy is synchronised in the same iteration."),
    ("devup/upload.py", "staged = w.cuda(non_blocking=True)", "BL004", B,
     "The event is recorded before the copy, so its synchronize does not wait for it."),
    ("devup/upload.py", "w.to(self.cfg.device, non_blocking=overlap)", "BL004", B,
     "The flag comes from config (True by default); nothing synchronises; the device copy of the view may still be reading when the outer copy_ is queued and the loop advances."),
    ("devup/upload.py", "copy_(w, non_blocking=BLOCKING)", "BL004", S,
     "BLOCKING is the module constant False: a blocking copy."),
    ("devup/swap.py", "nn.Parameter(w, requires_grad=False)", "BL003", B,
     "The module's parameter aliases the streamed view, which the streamer refills."),
    ("devup/swap.py", "nn.Parameter(w.clone(), requires_grad=False)", "BL003", S,
     "The parameter owns a clone."),
    ("devup/swap.py", "params[name].data = w.to(device)", "BL003", S,
     "A blocking .to(device) returns new device memory (device is a torch.device parameter, a GPU)."),
    ("devup/swap.py", "params[name].data = w\n", "BL003", B,
     "The parameter's data aliases the streamed view."),
]

LABELS["fused_cache"] = [
    ("fcache/fuse.py", "            waiting[name] = w\n", "BL003", B,
     "The first half of a pair is kept until its partner arrives, iterations later; the streamer refills its buffer meanwhile."),
    ("fcache/fuse.py", "waiting[name] = w.clone()", "BL003", S,
     "The waiting half is an owned clone."),
    ("fcache/fuse.py", "halves.append(PendingPair(name, w))", "BL003", B,
     "A dataclass record holding the view is kept in a list across iterations."),
    ("fcache/fuse.py", "halves.append(PendingPair(name, w.clone()))", "BL003", S,
     "The record holds an owned clone."),
    ("fcache/scan.py", "everything = list(runai_safetensors_weights_iterator(files))", "BL003", B,
     "Materialising the stream keeps every view of the reused buffer."),
    ("fcache/scan.py", "everything = [(n, w.clone()) for n, w in", "BL003", S,
     "The comprehension clones each view while iterating."),
    ("fcache/scan.py", "stacked[idx] = w", "BL003", S,
     "Index assignment copies the view's bytes into existing storage."),
    ("fcache/scan.py", "    return last\n", "BL003", B,
     "The last matching view is returned after the loop moved on (the streamer refilled its buffer)."),
    ("fcache/scan.py", "prev = w.clone()", "BL003", S,
     "The sliding window keeps an owned clone."),
    ("fcache/scan.py", "                self.tensors[name] = tensor\n\n    def fill_owned", "BL003", B,
     "InstantTensor with copy=False hands out views of its ring buffer; they are kept in the cache."),
    ("fcache/scan.py", "self.tensors[key] = owned", "BL003", S,
     "copy=True: each tensor owns its memory."),
]

LABELS["d2h_decode"] = [
    ("decode/sampler.py", "        host = ids.to(CPU, non_blocking=True)\n        >>return host.tolist()", "BL005", B,
     "tolist() reads the host tensor of a non-blocking D2H copy (CPU is a module constant torch.device('cpu')) with no synchronisation."),
    ("decode/sampler.py", "        torch.cuda.current_stream().synchronize()\n        >>return host.tolist()", "BL005", S,
     "The current stream is synchronised between the copy and the read."),
    ("decode/sampler.py", "        self.copy_done.synchronize()\n        >>return host_mask.tolist().count(True)\n\n    def finished_synced", "BL005", B,
     "The event is recorded before the copy; its synchronize does not cover the copy."),
    ("decode/sampler.py", "        self.copy_done.record()\n        self.copy_done.synchronize()\n        >>return host_mask.tolist().count(True)", "BL005", S,
     "The event is recorded after the copy and synchronised on the host before the read."),
    ("decode/sampler.py", "        return host_lens.tolist()", "BL005", B,
     "wait_event orders device work only; the host reads the in-flight tensor."),
    ("decode/sampler.py", "        return host_ids[0].item()", "BL005", S,
     "Blocking copy to the host."),
    ("decode/sampler.py", "        host = to_host_async(torch.argmax(logits, dim=-1))\n        >>return host.tolist()", "BL005", B,
     "The helper returns a non-blocking D2H copy; the caller reads it without synchronising."),
    ("decode/sampler.py", "        torch.cuda.synchronize()\n        >>return host.tolist()", "BL005", S,
     "Device synchronised before the read."),
    ("decode/sampler.py", "return self.pool.submit(detokenize, host)", "BL005", B,
     "The worker's detokenize reads tolist() of the in-flight tensor without synchronising."),
    ("decode/sampler.py", "return self.pool.submit(detokenize_after_sync, host)", "BL005", S,
     "The worker synchronises before it reads."),
    ("decode/logprobs.py", "    arr = out.numpy()\n    >>return arr.tolist()\n\n\ndef fetch_logprobs_synced", "BL005", B,
     "A pinned buffer allocated here is filled by a non-blocking copy from the device and read through its numpy() view without synchronising."),
    ("decode/logprobs.py", "    torch.cuda.synchronize()\n    arr = out.numpy()\n    >>return arr.tolist()", "BL005", S,
     "Synchronised before the numpy view is read."),
    ("decode/logprobs.py", "result[:] = out.numpy() > 0", "BL005", B,
     "A store into host memory computed from the in-flight pinned buffer (through numpy()), no synchronisation."),
]

LABELS["h2d_staging"] = [
    ("staging/feeder.py", "        staging.copy_(batch)\n        dev_out[i].copy_(staging, non_blocking=True)\n    return dev_out\n\n\ndef prefetch_fenced", "BL006", B,
     "The pinned staging buffer is refilled in the next iteration while the previous non-blocking H2D copy may still read it."),
    ("staging/feeder.py", "        copied.synchronize()\n        >>staging.copy_(batch)", "BL006", S,
     "An event recorded after the previous copy is synchronised on the host before the refill."),
    ("staging/feeder.py", "staging[: batch.numel()] = batch.reshape(-1)", "BL006", B,
     "wait_event is device-side only; the host refills the pinned buffer while the last copy may still read it."),
    ("staging/feeder.py", "        host.copy_(batch)", "BL006", S,
     "Pageable buffer: the non-blocking copy is staged by the driver before it returns."),
    ("staging/feeder.py", "slots[k].copy_(batch)", "BL006", S,
     "Two slots, each refilled only after its own fence (recorded after that slot's copy) is synchronised."),
    ("staging/shards.py", "            n = f.readinto(view)\n            if not n:\n                break\n            dev[offset : offset + n].copy_(pinned[:n], non_blocking=True)\n            offset += n\n    return offset\n\n\ndef upload_shard_synced", "BL006", B,
     "readinto refills the pinned buffer through its numpy view while the previous chunk's non-blocking copy may still read it."),
    ("staging/shards.py", "            torch.cuda.current_stream().synchronize()\n            >>n = f.readinto(view)", "BL006", S,
     "The stream is synchronised before each refill."),
    ("staging/uploader.py", "        self.host_ids[:n].copy_(torch.tensor(token_ids, dtype=torch.int64))\n        self.dev_ids[:n].copy_(self.host_ids[:n], non_blocking=True)\n        return", "BL006", B,
     "The next upload() call refills the pinned field while the previous call's copy may still read it."),
    ("staging/uploader.py", "        self.uploaded.synchronize()\n        >>self.host_ids[:n].copy_(", "BL006", S,
     "The event recorded after the previous call's copy is synchronised before the refill."),
]

LABELS["zmq_fanout"] = [
    ("fanout/publisher.py", "            self.sock.send(frame, copy=False)", "BL001", B,
     "Zero-copy send of a view of the encoder's reused buffer; the next encode() overwrites it before ZMQ's I/O thread reads it."),
    ("fanout/publisher.py", "            tracker = self.sock.send(frame, copy=False, track=True)\n            tracker.wait()", "BL001", S,
     "The tracker is waited for before the next encode()."),
    ("fanout/publisher.py", "            self.sock.send(frame)\n\n", "BL001", S,
     "copy=True (default): pyzmq copies the bytes in send()."),
    ("fanout/publisher.py", "self.sock.send_multipart([topic, frame], copy=False)", "BL001", B,
     "Zero-copy multipart send of the reused buffer's view, not waited for."),
    ("fanout/publisher.py", "            tracker = self.sock.send(frame, copy=False, track=True)\n            while not tracker.done:", "BL001", S,
     "Polls the tracker until the send is done before the next encode()."),
    ("fanout/publisher.py", "            tracker = self.sock.send(frame, copy=False, track=True)\n            if not tracker.done:", "BL001", B,
     "The tracker is only inspected for a counter; nothing waits before the next encode()."),
    ("fanout/publisher.py", "self.sock.send(bytes(frame), copy=False)", "BL001", S,
     "bytes() makes an owned copy that is sent zero-copy."),
    ("fanout/publisher.py", "threading.Thread(target=self._append_audit, args=(frame,), daemon=True).start()", "BL001", B,
     "A daemon thread writes the view to disk later; the next encode() overwrites the buffer first."),
]

LABELS["shm_rollout"] = [
    ("rollout/collect.py", "        trajectory.append(obs)\n", "BL003", B,
     "A view of the shared block is kept; the simulator overwrites it after send_action."),
    ("rollout/collect.py", "trajectory.append(obs.copy())", "BL003", S,
     "An owned copy is kept."),
    ("rollout/collect.py", "        fut = pool.submit(_summarise, obs)\n        client.send_action", "BL001", B,
     "The worker may read the view after send_action let the simulator refill the block; result() comes too late."),
    ("rollout/collect.py", "        fut = pool.submit(_summarise, obs)\n        action = policy(obs)", "BL001", S,
     "result() is taken before send_action advances the producer."),
    ("rollout/ingest.py", "pool.submit(_handle, np.frombuffer(buf, dtype=np.uint8))", "BL001", B,
     "The next recv_into overwrites the bytearray the submitted view reads."),
    ("rollout/ingest.py", "pool.submit(_handle, bytes(buf))", "BL001", S,
     "bytes(buf) is an owned copy."),
    ("rollout/ingest.py", "worker = threading.Thread(target=_handle, args=(np.frombuffer(buf, dtype=np.uint8),))", "BL001", S,
     "The thread is joined before the next refill."),
    ("rollout/ingest.py", "out.append(memoryview(buf))", "BL003", B,
     "Every kept memoryview shows the last record after the next recv_into."),
]

LABELS["callback_index"] = [
    ("cbindex/index.py", "        self.rows[key] = rows\n", "BL003", B,
     "The registered bound method keeps the reader's reused chunk array in an attribute past its return."),
    ("cbindex/index.py", "self.rows[key] = np.array(rows)", "BL003", S,
     "np.array copies the chunk."),
    ("cbindex/index.py", "self.pool.submit(_index_rows, key, rows)))", "BL001", B,
     "The registered lambda submits the reused chunk to the pool; the reader refills it when the lambda returns."),
    ("cbindex/index.py", "self.pool.submit(_index_rows, key, rows.copy())))", "BL001", S,
     "The lambda submits an owned copy."),
    ("cbindex/index.py", "self.reader.on_chunk(functools.partial(_write_rows, self.means))", "BL001", S,
     "The partial reduces the chunk synchronously and keeps only a float."),
    ("cbindex/weights.py", "visit_weights(files, lambda n, w: futs.append(pool.submit(params[n].copy_, w)))", "BL001", B,
     "The visitor lambda submits each streamed view; futures are waited for only after the stream."),
    ("cbindex/weights.py", "visit_weights(files, lambda n, w: params[n].copy_(w))", "BL001", S,
     "The visitor copies synchronously."),
    ("cbindex/weights.py", "        futs.append(pool.submit(params[n].copy_, w))", "BL001", S,
     "Marked views return early after a synchronous copy; only unmarked tensors reach the pool."),
    ("cbindex/weights.py", "            kept[n] = w", "BL003", B,
     "The visitor keeps streamed views in the caller's dict, returned after the stream moved on."),
]

LABELS["rl_push"] = [
    ("rlpush/buckets.py", "        bucket.tensors.append(w)", "BL003", B,
     "Views are kept in the bucket across iterations until it is full; the streamer refills the buffer meanwhile."),
    ("rlpush/buckets.py", "bucket.add(name, w.detach().clone())", "BL003", S,
     "The bucket keeps owned clones."),
    ("rlpush/sync.py", "threading.Thread(target=self.engine.send_one, args=(name, w), daemon=True).start()", "BL001", B,
     "A detached thread sends the view later; the iterator advances at once."),
    ("rlpush/sync.py", "sender = threading.Thread(target=self.engine.send_one, args=(name, w))", "BL001", S,
     "The thread is joined in the same iteration."),
    ("rlpush/sync.py", "self.outbox.put((name, w))", "BL001", B,
     "The outbox's consumer reads the view later."),
    ("rlpush/sync.py", "self.outbox.put((name, w.clone()))", "BL001", S,
     "An owned clone goes on the queue."),
    ("rlpush/sync.py", "            if background_ok(w):\n                >>futs.append(self.pool.submit(", "BL001", S,
     "The guard returns False for marked views, which are sent inline."),
    ("rlpush/policy.py", "def background_ok(", "BL002", S,
     "A class pattern with the marker keyword returns False for marked tensors before any True."),
    ("rlpush/policy.py", "def offloadable(", "BL002", B,
     "Used as a guard (if offloadable(w): submit); it tests another attribute, so marked CPU views go to the pool."),
    ("rlpush/sync.py", "futs = [self.pool.submit(self.engine.send_one, n, w) for n, w in vllm_stream(self.files)]", "BL001", S,
     "vLLM 0.33.0's RunAI iterator yields clones (owned)."),
    ("rlpush/sync.py", "return dict(runai_safetensors_weights_iterator(self.files))", "BL003", B,
     "dict() materialises the stream: every value is a view of the refilled buffer."),
    ("rlpush/sync.py", "list(self.pool.map(lambda kv: self.engine.send_one(*kv), owned))", "BL001", S,
     "Executor.map over a generator that clones each view."),
]


def line_of(text: str, snippet: str) -> int:
    """The 1-based line of ``snippet`` (at its ``>>`` mark, else its start); it must occur once."""
    mark = snippet.find(">>")
    plain = snippet.replace(">>", "", 1) if mark >= 0 else snippet
    first = text.find(plain)
    if first < 0 or text.find(plain, first + 1) >= 0:
        raise SystemExit(f"snippet not unique ({'absent' if first < 0 else 'twice'}): {snippet!r}")
    return text.count("\n", 0, first + max(mark, 0)) + 1


def toml_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def main() -> int:
    total = bugs = 0
    for project, sites in LABELS.items():
        out = [f"# Ground truth for {project} (written blind, 2026-12-06; generated by _gen/labels.py)\n"]
        seen = set()
        for file, snippet, rule, bug, why in sites:
            with open(os.path.join(HERE, project, file), encoding="utf-8") as fh:
                line = line_of(fh.read(), snippet)
            key = (file, line, rule)
            if key in seen:
                raise SystemExit(f"duplicate label {key}")
            seen.add(key)
            out.append(f"[[site]]\nfile = {toml_str(file)}\nline = {line}\nrule = {toml_str(rule)}\n"
                       f"bug = {'true' if bug else 'false'}\nwhy = {toml_str(why)}\n")
            total += 1
            bugs += bug
        with open(os.path.join(HERE, project, "LABELS.toml"), "w", encoding="utf-8") as fh:
            fh.write("\n".join(out))
    print(f"{total} sites: {bugs} bugs, {total - bugs} safe twins")
    return 0


if __name__ == "__main__":
    sys.exit(main())
