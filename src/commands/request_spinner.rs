//! A spinner on stderr, only on a terminal, while a request to the API server takes longer
//! than a second: a slow or stuck server then looks like waiting, not like a hang.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::input::connect::activity::Activity;

/// Requests answered within this show nothing.
const SHOW_AFTER: Duration = Duration::from_secs(1);
const TICK: Duration = Duration::from_millis(100);

pub(super) struct RequestSpinner {
    stop: Arc<AtomicBool>,
    /// Shared with the drawing thread, so a line printed meanwhile can put the spinner aside.
    bar: Arc<Mutex<Option<ProgressBar>>>,
    activity: Activity,
    thread: Option<JoinHandle<()>>,
}

impl RequestSpinner {
    /// Watches `activity` on its own thread: the single-threaded runtime is busy waiting for
    /// the very request the spinner is about.
    pub(super) fn start(activity: Activity, server: String) -> RequestSpinner {
        let stop = Arc::new(AtomicBool::new(false));
        let bar: Arc<Mutex<Option<ProgressBar>>> = Arc::default();
        let (stopping, drawn, watched) = (stop.clone(), bar.clone(), activity.clone());
        let thread = std::thread::spawn(move || {
            while !stopping.load(Ordering::Relaxed) {
                let waiting = watched.longest_waiting(Instant::now());
                let mut bar = drawn.lock().unwrap_or_else(|e| e.into_inner());
                match waiting {
                    Some((what, waited)) if waited >= SHOW_AFTER => {
                        let bar = bar.get_or_insert_with(new_bar);
                        bar.set_message(format!("{what} from {server} ({}s)", waited.as_secs()));
                        bar.tick();
                    }
                    _ => {
                        if let Some(done) = bar.take() {
                            done.finish_and_clear();
                        }
                    }
                }
                drop(bar);
                std::thread::sleep(TICK);
            }
            if let Some(done) = drawn.lock().unwrap_or_else(|e| e.into_inner()).take() {
                done.finish_and_clear();
            }
        });
        RequestSpinner {
            stop,
            bar,
            activity,
            thread: Some(thread),
        }
    }

    /// Runs `print` with the spinner's line cleared, then draws it again if a request is
    /// still slow (an error line about a request that has ended is not followed by its spinner).
    pub(super) fn suspend(&self, print: impl FnOnce()) {
        let mut bar = self.bar.lock().unwrap_or_else(|e| e.into_inner());
        let still_slow = self
            .activity
            .longest_waiting(Instant::now())
            .is_some_and(|(_, waited)| waited >= SHOW_AFTER);
        if !still_slow && let Some(done) = bar.take() {
            done.finish_and_clear();
        }
        match bar.as_ref() {
            Some(bar) => bar.suspend(print),
            None => print(),
        }
    }
}

fn new_bar() -> ProgressBar {
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template("{spinner} {msg}") {
        bar.set_style(style);
    }
    bar
}

impl Drop for RequestSpinner {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
