"""What the device rules assume of torch, checked on the real torch CPU build (no GPU is
needed for any of it): ``rules/torch.toml``'s ``host-allocations`` and the ``fills =
"receiver"`` source rest on these."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")


def test_copy_returns_its_receiver() -> None:
    """``host = pinned.copy_(gpu, non_blocking=True)``: ``host`` is ``pinned``, in flight too."""
    receiver = torch.zeros(4)
    assert receiver.copy_(torch.ones(4), non_blocking=True) is receiver


def test_a_host_to_host_copy_is_done_when_it_returns() -> None:
    """A non-blocking copy between host tensors is synchronous: nothing is in flight after it."""
    receiver, source = torch.zeros(1 << 16), torch.arange(1 << 16, dtype=torch.float32)
    receiver.copy_(source, non_blocking=True)
    assert torch.equal(receiver, source)


@pytest.mark.parametrize(
    "make",
    [
        lambda: torch.empty(4),
        lambda: torch.zeros(4),
        lambda: torch.ones(4),
        lambda: torch.full((4,), 2.0),
        lambda: torch.arange(4),
        lambda: torch.tensor([1, 2]),
        lambda: torch.empty(4, device="cpu"),
        lambda: torch.zeros_like(torch.ones(2), device="cpu"),
        lambda: torch.ones(2).cpu(),
        lambda: torch.ones(2).to("cpu"),
        lambda: torch.from_numpy(torch.ones(2).numpy()),
    ],
)
def test_host_allocations_live_on_the_host(make) -> None:
    """The factories without a device allocate on the default device, the CPU."""
    assert make().device.type == "cpu"


@pytest.mark.parametrize(
    "make",
    [
        lambda: torch.empty(3, 4),
        lambda: torch.zeros_like(torch.ones(3, 4)),
        lambda: torch.ones(3, 4).new_zeros(3, 4),
        lambda: __import__("numpy").zeros((3, 4), dtype=__import__("numpy").float32),
    ],
)
def test_a_store_into_an_array_copies(make) -> None:
    """``array-allocations``: ``stacked[i] = w`` writes ``w``'s bytes into the array, so a
    later write to ``w``'s buffer (the producer refilling it) leaves the array as it was."""
    stacked = make()
    w = torch.ones(4)
    stacked[0] = w if isinstance(stacked, torch.Tensor) else w.numpy()
    w.fill_(7.0)
    assert float(stacked[0][0]) == 1.0


def test_an_object_array_keeps_the_view() -> None:
    """An object array (left out of ``array-allocations``) holds the stored object itself."""
    np = pytest.importorskip("numpy")
    held = np.empty(2, dtype=object)
    w = torch.ones(4)
    held[0] = w
    assert held[0] is w


def test_a_new_event_waits_for_nothing() -> None:
    """``new-events``: an event never recorded is complete (its synchronize returns at once)."""
    if not hasattr(torch, "Event"):
        pytest.skip("torch.Event needs torch >= 2.4")
    try:
        event = torch.Event("cpu")
    except (RuntimeError, TypeError):
        pytest.skip("no event on this build's CPU device")
    assert event.query()
