//! The kernel side of the loop: one epoll instance, an eventfd that other
//! threads write to wake the loop, and a timerfd armed at the next timer's
//! deadline. This is the only module that makes system calls for the core.
//!
//! The loop never polls: it blocks in `epoll_wait` with no timeout, and the
//! timerfd, armed with an absolute `CLOCK_MONOTONIC` deadline at nanosecond
//! precision, ends the wait when a timer is due. A millisecond epoll timeout
//! would make every timer late by up to a millisecond; the timerfd's hrtimer is
//! not subject to the thread's timer slack either.

use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};

use rustix::event::{EventfdFlags, epoll, eventfd};
use rustix::time::{
    ClockId, Itimerspec, TimerfdClockId, TimerfdFlags, TimerfdTimerFlags, Timespec, timerfd_create,
    timerfd_settime,
};

/// The epoll token of the eventfd.
pub(crate) const WAKE_TOKEN: u64 = u64::MAX;
/// The epoll token of the timerfd.
pub(crate) const TIMER_TOKEN: u64 = u64::MAX - 1;

/// Readiness of one file descriptor, from one `epoll_wait`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ready {
    pub(crate) token: u64,
    pub(crate) readable: bool,
    pub(crate) writable: bool,
}

#[derive(Debug)]
pub(crate) struct Poller {
    epoll: OwnedFd,
    wake: OwnedFd,
    timer: OwnedFd,
    /// The deadline the timerfd is armed with, in nanoseconds of
    /// `CLOCK_MONOTONIC`; `None` when disarmed.
    armed: Option<i128>,
}

fn to_io(e: rustix::io::Errno) -> io::Error {
    io::Error::from_raw_os_error(e.raw_os_error())
}

impl Poller {
    pub(crate) fn new() -> io::Result<Self> {
        let epoll = epoll::create(epoll::CreateFlags::CLOEXEC).map_err(to_io)?;
        let wake = eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK).map_err(to_io)?;
        let timer = timerfd_create(
            TimerfdClockId::Monotonic,
            TimerfdFlags::CLOEXEC | TimerfdFlags::NONBLOCK,
        )
        .map_err(to_io)?;
        epoll::add(
            &epoll,
            &wake,
            epoll::EventData::new_u64(WAKE_TOKEN),
            epoll::EventFlags::IN,
        )
        .map_err(to_io)?;
        // Edge-triggered: each expiry wakes the loop once, and re-arming
        // resets the count, so the timerfd never needs to be read.
        epoll::add(
            &epoll,
            &timer,
            epoll::EventData::new_u64(TIMER_TOKEN),
            epoll::EventFlags::IN | epoll::EventFlags::ET,
        )
        .map_err(to_io)?;
        Ok(Self {
            epoll,
            wake,
            timer,
            armed: None,
        })
    }

    pub(crate) fn epoll_fd(&self) -> RawFd {
        self.epoll.as_raw_fd()
    }

    pub(crate) fn wake_fd(&self) -> RawFd {
        self.wake.as_raw_fd()
    }

    /// Registers, changes or removes the interest in `fd`. `old` is the mask
    /// registered before (0 for none), `new` the one wanted (0 to remove).
    pub(crate) fn update(&self, fd: RawFd, old: u8, new: u8) -> io::Result<()> {
        // SAFETY: the fd is only borrowed for the duration of the epoll_ctl
        // call; whether it is open is the kernel's to check (EBADF).
        let bfd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
        let flags = interest(new);
        let data = epoll::EventData::new_u64(fd as u64);
        let res = match (old, new) {
            (0, 0) => Ok(()),
            (0, _) => match epoll::add(&self.epoll, bfd, data, flags) {
                Err(rustix::io::Errno::EXIST) => epoll::modify(&self.epoll, bfd, data, flags),
                r => r,
            },
            (_, 0) => match epoll::delete(&self.epoll, bfd) {
                // The fd was closed (and so left the epoll set) before its
                // callbacks were removed: nothing is registered any more.
                Err(rustix::io::Errno::NOENT | rustix::io::Errno::BADF) => Ok(()),
                r => r,
            },
            _ => match epoll::modify(&self.epoll, bfd, data, flags) {
                Err(rustix::io::Errno::NOENT) => epoll::add(&self.epoll, bfd, data, flags),
                r => r,
            },
        };
        res.map_err(to_io)
    }

    /// Makes the timerfd fire at `deadline_ns` (absolute,
    /// `CLOCK_MONOTONIC`) or earlier, or not at all for `None`; `now_ns` is
    /// the current time, if the caller has it.
    ///
    /// A timer that is already armed for a later instant than now, and no
    /// later than the deadline, is left as it is: it wakes the loop early,
    /// and the loop then arms it for the deadline it has by then. A server
    /// that pushes a keep-alive timeout back on every request would
    /// otherwise pay a `timerfd_settime` per request; this way it pays one
    /// per timeout period. Likewise a timer armed when no deadline remains
    /// is left to fire once, for nothing.
    pub(crate) fn arm(
        &mut self,
        deadline_ns: Option<i128>,
        now_ns: Option<i128>,
    ) -> io::Result<()> {
        if self.armed == deadline_ns {
            return Ok(());
        }
        match (self.armed, deadline_ns, now_ns) {
            (Some(a), Some(d), Some(now)) if a > now && a <= d => return Ok(()),
            (Some(_), None, _) => return Ok(()),
            _ => {}
        }
        let value = match deadline_ns {
            // A zero it_value disarms; a deadline at 0 cannot occur. The
            // seconds saturate: `sleep(math.inf)` gives a deadline of
            // i128::MAX, whose low 64 bits (what `as` keeps) are negative,
            // and the kernel refuses a negative time with EINVAL. It clamps
            // a far one to its own largest time instead.
            Some(ns) => Timespec {
                tv_sec: i64::try_from(ns / 1_000_000_000).unwrap_or(i64::MAX),
                tv_nsec: (ns % 1_000_000_000).max(1) as _,
            },
            None => Timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
        };
        let spec = Itimerspec {
            it_interval: Timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: value,
        };
        timerfd_settime(&self.timer, TimerfdTimerFlags::ABSTIME, &spec).map_err(to_io)?;
        self.armed = deadline_ns;
        Ok(())
    }
}

fn interest(mask: u8) -> epoll::EventFlags {
    let mut f = epoll::EventFlags::empty();
    if mask & READ != 0 {
        f |= epoll::EventFlags::IN;
    }
    if mask & WRITE != 0 {
        f |= epoll::EventFlags::OUT;
    }
    f
}

pub(crate) const READ: u8 = 1;
pub(crate) const WRITE: u8 = 2;

/// The buffer `epoll_wait` fills. Its events carry only integer tokens, so
/// it may cross to the thread-detached wait.
pub(crate) struct Events(Vec<epoll::Event>);

impl std::fmt::Debug for Events {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Events({})", self.0.len())
    }
}

// SAFETY: the pointer variant of `EventData` is never used: every token is
// an integer (an fd or a reserved value), so nothing is shared.
unsafe impl Send for Events {}

impl Events {
    pub(crate) fn with_capacity(n: usize) -> Self {
        Self(Vec::with_capacity(n))
    }
}

/// Blocks in `epoll_wait` on `epfd` until an event, or returns at once when
/// `block` is false. Called with the GIL released. `Interrupted` is returned
/// as an error so that the caller can run Python's signal handlers.
pub(crate) fn wait(
    epfd: RawFd,
    events: &mut Events,
    block: bool,
    out: &mut Vec<Ready>,
) -> io::Result<()> {
    // SAFETY: the epoll fd is owned by the loop, which outlives the wait: the
    // loop cannot be closed while it runs.
    let ep = unsafe { std::os::fd::BorrowedFd::borrow_raw(epfd) };
    let events = &mut events.0;
    events.clear();
    let zero = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    let timeout = if block { None } else { Some(&zero) };
    epoll::wait(ep, rustix::buffer::spare_capacity(events), timeout).map_err(to_io)?;
    out.clear();
    for ev in events.iter() {
        let f = ev.flags;
        let err = f.intersects(epoll::EventFlags::ERR | epoll::EventFlags::HUP);
        out.push(Ready {
            token: ev.data.u64(),
            readable: err || f.intersects(epoll::EventFlags::IN | epoll::EventFlags::RDHUP),
            writable: err || f.contains(epoll::EventFlags::OUT),
        });
    }
    Ok(())
}

/// Reads the eventfd's counter to zero, so that level-triggered epoll stops
/// reporting it.
pub(crate) fn drain_wake(fd: RawFd) {
    // SAFETY: the eventfd is owned by the loop and open while it runs.
    let bfd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
    let mut buf = [0u8; 8];
    let _ = rustix::io::read(bfd, &mut buf);
}

/// Adds one to the eventfd's counter: wakes the loop from any thread.
pub(crate) fn wake(fd: RawFd) {
    // SAFETY: as above; a write to a closed loop's fd fails with EBADF,
    // which is ignored, and the loop checks `closed` before it gets here.
    let bfd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
    let _ = rustix::io::write(bfd, &1u64.to_ne_bytes());
}

/// `CLOCK_MONOTONIC` in nanoseconds: the clock of `time.monotonic()`.
pub(crate) fn now_ns() -> i128 {
    let t = rustix::time::clock_gettime(ClockId::Monotonic);
    t.tv_sec as i128 * 1_000_000_000 + t.tv_nsec as i128
}

impl AsFd for Poller {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.epoll.as_fd()
    }
}

/// When the busy loop last polled, and whether `gap` has passed since. The
/// same clock tells how long writes have waited for the end of the
/// iteration (`core::FLUSH_GAP_NS`): there "polled" is when they began to.
///
/// The test runs once per iteration while callbacks are ready (and after
/// each callback while writes wait), so its cost is per callback in a
/// chain of them. Where the kernel's clocksource is the
/// TSC (the kernel found it stable and in step across CPUs), the test reads
/// the TSC itself (`rdtsc`, about 8 ns here) instead of `clock_gettime`
/// (about 17 ns), with the TSC's rate measured against `CLOCK_MONOTONIC`
/// over the process's first few milliseconds of polls. Until then, and
/// elsewhere, it reads `CLOCK_MONOTONIC`. The bound is the same either way:
/// the tick count for `gap` is rounded down.
#[derive(Debug)]
pub(crate) struct PollGap {
    gap_ns: i128,
    last_ns: i128,
    last_tick: u64,
    /// `gap_ns` in ticks, once the rate is known (0 until then): worked
    /// out once, not with a 128-bit division per test.
    gap_ticks: u64,
}

impl PollGap {
    /// A gap of `gap_ns`; the first test is due.
    pub(crate) fn new(gap_ns: i128) -> Self {
        PollGap {
            gap_ns,
            last_ns: i128::MIN / 2,
            last_tick: 0,
            gap_ticks: 0,
        }
    }

    /// The loop polled at `now` (`CLOCK_MONOTONIC` ns).
    pub(crate) fn polled(&mut self, now: i128) {
        self.last_ns = now;
        if let Some(t) = tick::now() {
            self.last_tick = t;
            if self.gap_ticks == 0 {
                tick::calibrate(t, now);
                self.gap_ticks = tick::gap_ticks(self.gap_ns).unwrap_or(0);
            }
        }
    }

    /// Whether the gap has passed: `(due, the time if it was read)`. With
    /// `need_now` the clock is read anyway (the caller has timers to check).
    pub(crate) fn due(&self, need_now: bool) -> (bool, Option<i128>) {
        if !need_now
            && self.gap_ticks != 0
            && let Some(t) = tick::now()
        {
            // A tick count that went backwards wraps to a huge one: due.
            return (t.wrapping_sub(self.last_tick) >= self.gap_ticks, None);
        }
        let now = now_ns();
        (now - self.last_ns >= self.gap_ns, Some(now))
    }
}

/// The TSC as a clock for [`PollGap`].
mod tick {
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};

    /// TSC ticks per microsecond, times 1024; 0 until measured.
    static TICKS_PER_US_X1024: AtomicU64 = AtomicU64::new(0);
    /// The first sample: TSC and `CLOCK_MONOTONIC` ns (0: none yet).
    static START_TICK: AtomicU64 = AtomicU64::new(0);
    static START_NS: AtomicI64 = AtomicI64::new(0);
    /// How long the rate is measured over.
    const CALIBRATION_NS: i128 = 5_000_000;

    /// Whether the kernel keeps time with the TSC: read once per process.
    fn usable() -> bool {
        static USABLE: OnceLock<bool> = OnceLock::new();
        *USABLE.get_or_init(|| {
            cfg!(target_arch = "x86_64")
                && std::fs::read_to_string(
                    "/sys/devices/system/clocksource/clocksource0/current_clocksource",
                )
                .is_ok_and(|s| s.trim() == "tsc")
        })
    }

    pub(super) fn now() -> Option<u64> {
        #[cfg(target_arch = "x86_64")]
        if usable() {
            // SAFETY: rdtsc has no preconditions on x86_64.
            return Some(unsafe { core::arch::x86_64::_rdtsc() });
        }
        None
    }

    /// Records a (tick, ns) pair; the first one that is `CALIBRATION_NS`
    /// after the first sample fixes the rate.
    pub(super) fn calibrate(t: u64, ns: i128) {
        if TICKS_PER_US_X1024.load(Relaxed) != 0 {
            return;
        }
        let start_ns = START_NS.load(Relaxed) as i128;
        if start_ns == 0 {
            START_TICK.store(t, Relaxed);
            START_NS.store(ns as i64, Relaxed);
            return;
        }
        let dns = ns - start_ns;
        if dns < CALIBRATION_NS {
            return;
        }
        let dt = t.wrapping_sub(START_TICK.load(Relaxed)) as u128;
        let rate = dt * 1024 * 1000 / dns as u128;
        // A rate that makes no sense (a TSC that went backwards, or less
        // than 100 MHz) leaves the clock in use.
        if (100 * 1024..u64::MAX as u128).contains(&rate) {
            TICKS_PER_US_X1024.store(rate as u64, Relaxed);
        } else {
            START_NS.store(0, Relaxed);
        }
    }

    /// The ticks in `gap_ns`, rounded down; `None` until measured.
    pub(super) fn gap_ticks(gap_ns: i128) -> Option<u64> {
        match TICKS_PER_US_X1024.load(Relaxed) {
            0 => None,
            r => Some((r as u128 * gap_ns as u128 / 1024 / 1000) as u64),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deadline past what 64-bit seconds hold (`sleep(math.inf)`'s, and
    /// `call_at(1e300)`'s) arms the timerfd for the kernel's farthest time:
    /// it does not fail, and it does not fire.
    #[test]
    fn a_deadline_beyond_64_bit_seconds_arms_the_timer() {
        for far in [i128::MAX, 10i128.pow(30), i64::MAX as i128 * 1_000_000_000] {
            let mut p = Poller::new().unwrap();
            p.arm(Some(far), Some(now_ns())).unwrap();
            let mut buf = [0u8; 8];
            assert_eq!(
                rustix::io::read(&p.timer, &mut buf),
                Err(rustix::io::Errno::AGAIN),
                "the timer fired for a deadline of {far} ns"
            );
        }
    }

    /// Once the TSC's rate is measured, the gap the loop tests by ticks is
    /// the gap in nanoseconds, rounded down: never longer (the bound), and
    /// not much shorter (a poll per 20 us, not more).
    #[test]
    fn a_gap_in_ticks_is_the_gap_in_time() {
        let gap = 20_000;
        let mut g = PollGap::new(gap);
        g.polled(now_ns());
        // 6 ms later (a timerfd's read blocks until then), past the 5 ms
        // the rate is measured over.
        let tfd = timerfd_create(TimerfdClockId::Monotonic, TimerfdFlags::CLOEXEC).unwrap();
        let six_ms = Itimerspec {
            it_interval: Timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: Timespec {
                tv_sec: 0,
                tv_nsec: 6_000_000,
            },
        };
        timerfd_settime(&tfd, TimerfdTimerFlags::empty(), &six_ms).unwrap();
        rustix::io::read(&tfd, &mut [0u8; 8]).unwrap();
        g.polled(now_ns());
        if tick::gap_ticks(gap).is_none() {
            // No TSC clocksource here: the clock is read, as before.
            assert!(tick::now().is_none());
            return;
        }
        // The shortest of a few tries: one that was preempted runs long.
        let shortest = (0..20)
            .map(|_| {
                g.polled(now_ns());
                let t0 = now_ns();
                while !g.due(false).0 {}
                now_ns() - t0
            })
            .min()
            .unwrap();
        assert!(
            (gap * 8 / 10..=gap).contains(&shortest),
            "due after {shortest} ns for a gap of {gap} ns"
        );
    }
}
