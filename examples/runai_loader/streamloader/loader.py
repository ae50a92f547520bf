from streamloader.weights import stream_safetensors


def load_model(model, files):
    model.load_weights(stream_safetensors(files))
    return model
