"""The producer in every example: SGLang's RunAI iterator, which marks each tensor it yields
because the tensor is a zero-copy view of the streamer's reused CPU buffer. The including
module imports SafetensorsStreamer and defines RUNAI_STREAMER_TENSOR_ATTR."""

ITERATOR = '''\
def runai_safetensors_weights_iterator(files: list[str]):
    """Yield (name, tensor); every tensor is a zero-copy view of the streamer's CPU
    buffer, which the streamer refills as soon as the next tensor is requested."""
    with SafetensorsStreamer() as streamer:
        streamer.stream_files(files)
        for name, tensor in streamer.get_tensors():
            setattr(tensor, RUNAI_STREAMER_TENSOR_ATTR, True)
            yield name, tensor
'''
