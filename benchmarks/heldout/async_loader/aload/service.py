import asyncio

from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator

from aload.device import blocking_h2d, h2d


class AsyncWeightService:
    def __init__(self, model):
        self.params = dict(model.named_parameters())

    async def load_tasks(self, files):
        tasks = []
        for name, w in runai_safetensors_weights_iterator(files):
            tasks.append(asyncio.create_task(h2d(self.params[name], w)))
        await asyncio.gather(*tasks)

    async def load_awaited(self, files):
        for name, w in runai_safetensors_weights_iterator(files):
            await h2d(self.params[name], w)

    async def load_offloaded(self, files):
        loop = asyncio.get_running_loop()
        for name, w in runai_safetensors_weights_iterator(files):
            await loop.run_in_executor(None, blocking_h2d, self.params[name], w)

    async def load_offloaded_batched(self, files):
        loop = asyncio.get_running_loop()
        futs = [loop.run_in_executor(None, blocking_h2d, self.params[name], w) for name, w in runai_safetensors_weights_iterator(files)]
        await asyncio.gather(*futs)
