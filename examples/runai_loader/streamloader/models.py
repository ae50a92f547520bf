import concurrent.futures

from streamloader.executor_utils import maybe_submit, should_async_load


class TinyModel:
    def __init__(self, params):
        self.params = params

    def load_weights(self, weights):
        with concurrent.futures.ThreadPoolExecutor() as executor:
            futures = []
            for name, loaded_weight in weights:
                param = self.params[name]
                maybe_submit(executor, futures, should_async_load(loaded_weight), param.copy_, loaded_weight)
            for future in futures:
                future.result()
