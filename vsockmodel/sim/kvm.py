"""KVM's halt polling: how fast a halted vCPU runs again (virt/kvm/kvm_main.c).

When a guest vCPU executes HLT with nothing to run, kvm_vcpu_halt() first
polls on the host for up to the vCPU's own ``halt_poll_ns`` before it
schedules the vCPU thread out (kvm_vcpu_block). A wake-up that arrives while
it still polls skips the host scheduler: the vCPU enters the guest again at
once. The window adapts after every halt:

    if (halt_ns <= vcpu->halt_poll_ns)
            ;                                   /* the window was long enough */
    else if (vcpu->halt_poll_ns && halt_ns > max_halt_poll_ns)
            shrink_halt_poll_ns(vcpu);          /* a long block: poll less */
    else if (vcpu->halt_poll_ns < max_halt_poll_ns && halt_ns < max_halt_poll_ns)
            grow_halt_poll_ns(vcpu);            /* a short halt the window missed */

The model keeps one window per guest task, since each task has its vCPU to itself.
"""

from __future__ import annotations

from ..model import kernel


class HaltPoll:
    """One vCPU's halt-polling window (``vcpu->halt_poll_ns``)."""

    __slots__ = ("max_ns", "window_ns")

    def __init__(self, max_ns: float) -> None:
        self.max_ns = max_ns        # max_halt_poll_ns: the halt_poll_ns module parameter
        self.window_ns = 0.0        # vcpu->halt_poll_ns starts at 0

    def kvm_vcpu_halt(self, halt_ns: float) -> bool:
        """A halt of ``halt_ns`` has ended: True if the wake-up came while KVM
        still polled (no trip through the host scheduler). Then adapt the window."""
        hit = halt_ns <= self.window_ns
        if self.max_ns:
            if halt_ns <= self.window_ns:
                pass
            elif self.window_ns and halt_ns > self.max_ns:
                self.shrink_halt_poll_ns()
            elif self.window_ns < self.max_ns and halt_ns < self.max_ns:
                self.grow_halt_poll_ns()
        return hit

    def grow_halt_poll_ns(self) -> None:
        window = self.window_ns * kernel.HALT_POLL_NS_GROW
        self.window_ns = min(max(window, kernel.HALT_POLL_NS_GROW_START), self.max_ns)

    def shrink_halt_poll_ns(self) -> None:
        self.window_ns /= kernel.HALT_POLL_NS_SHRINK
