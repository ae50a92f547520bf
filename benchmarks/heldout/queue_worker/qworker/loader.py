from runai_model_streamer import SafetensorsStreamer

from qworker.records import DeferredShard, WeightChunk
from qworker.worker import CopyWorker


def stream_into(model, paths, lockstep: bool = False):
    params = dict(model.named_parameters())
    worker = CopyWorker(params)
    worker.start()
    deferred = []
    with SafetensorsStreamer() as streamer:
        streamer.stream_files(paths)
        for name, tensor in streamer.get_tensors():
            if name not in params:
                deferred.append(DeferredShard(name, tensor))
                continue
            if lockstep:
                worker.inbox.put(WeightChunk(name, tensor))
                worker.inbox.join()
            else:
                worker.inbox.put(WeightChunk(name, tensor.clone()))
    worker.inbox.put(None)
    worker.join()
    return deferred


def stream_into_fast(model, paths):
    params = dict(model.named_parameters())
    worker = CopyWorker(params)
    worker.start()
    with SafetensorsStreamer() as streamer:
        streamer.stream_files(paths)
        for name, tensor in streamer.get_tensors():
            worker.inbox.put(WeightChunk(name, tensor))
    worker.inbox.put(None)
    worker.join()
