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
