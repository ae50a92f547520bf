from sfut.engine import ShardedLoadEngine


def load_checkpoint(model, files, stepwise: bool = False):
    engine = ShardedLoadEngine(model)
    if stepwise:
        engine.submit_stepwise(files)
    else:
        engine.submit_all(files)
    engine.finalize()
    return model
