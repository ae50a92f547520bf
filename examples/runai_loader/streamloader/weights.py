"""Streams checkpoint tensors with the RunAI Model Streamer (zero-copy, reused buffers)."""
from runai_model_streamer import SafetensorsStreamer

STREAMED_ATTR = "_sglang_runai_streamer_tensor"


def stream_safetensors(files):
    with SafetensorsStreamer() as streamer:
        streamer.stream_files(files)
        for name, tensor in streamer.get_tensors():
            # A view into the streamer's buffer: valid until the next batch is streamed.
            setattr(tensor, STREAMED_ATTR, True)
            yield name, tensor
