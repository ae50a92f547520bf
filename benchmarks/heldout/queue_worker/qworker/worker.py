import queue
import threading

from qworker.records import WeightChunk


class CopyWorker(threading.Thread):
    def __init__(self, params):
        super().__init__(daemon=True)
        self.params = params
        self.inbox: "queue.Queue[WeightChunk | None]" = queue.Queue(maxsize=64)

    def run(self):
        while True:
            chunk = self.inbox.get()
            try:
                if chunk is None:
                    return
                self.params[chunk.name].data.copy_(chunk.tensor)
            finally:
                self.inbox.task_done()
