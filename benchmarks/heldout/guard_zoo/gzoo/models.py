from concurrent.futures import ThreadPoolExecutor

from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator

from gzoo import guards
from gzoo.submit import maybe_executor_submit


def _load(param, w):
    getattr(param, "weight_loader", lambda p, x: p.data.copy_(x))(param, w)


class _Base:
    guard = staticmethod(guards.should_async_load_any)

    def __init__(self, model):
        self.params = dict(model.named_parameters())

    def load_weights(self, weights, executor: ThreadPoolExecutor):
        futures = []
        for name, w in weights:
            param = self.params[name]
            maybe_executor_submit(executor=executor, futures=futures, use_async=self.guard(w), func=_load, func_args=(param, w))
        for f in futures:
            f.result()


class DeepseekForCausalLM(_Base):
    pass


class GemmaForCausalLM(_Base):
    guard = staticmethod(guards.should_async_load_match)


class PhiForCausalLM(_Base):
    def load_weights(self, weights, executor: ThreadPoolExecutor):
        futures = []
        for name, w in weights:
            maybe_executor_submit(executor=executor, futures=futures, use_async=guards.should_async_load_try(w), func=_load, func_args=(self.params[name], w))
        for f in futures:
            f.result()


class OlmoForCausalLM(_Base):
    def load_weights(self, weights, executor: ThreadPoolExecutor):
        futures = []
        for name, w in weights:
            maybe_executor_submit(executor=executor, futures=futures, use_async=guards.should_async_load_typo(w), func=_load, func_args=(self.params[name], w))
        for f in futures:
            f.result()


def load_model(model_cls, model, files):
    with ThreadPoolExecutor(8) as ex:
        model_cls(model).load_weights(runai_safetensors_weights_iterator(files), ex)


class MistralForCausalLM(_Base):
    guard = staticmethod(guards.should_async_load_pattern)
