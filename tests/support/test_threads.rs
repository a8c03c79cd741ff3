//! How many tests of one test binary run at once, chosen by the binary itself.

/// `default_test_threads!(N)`: the test binary runs N tests at once unless its caller says
/// otherwise (`--test-threads` or `RUST_TEST_THREADS`). libtest takes its thread count only
/// from those two, read before any test code runs, and defaults to one test per core, which
/// suits tests that compute but leaves the machine idle while tests that wait on timers run one
/// after another. The function runs from `.init_array` as the binary loads, on its only thread.
#[macro_export]
macro_rules! default_test_threads {
    ($threads:literal) => {
        #[used]
        #[unsafe(link_section = ".init_array")]
        static SET_DEFAULT_TEST_THREADS: extern "C" fn() = set_default_test_threads;

        extern "C" fn set_default_test_threads() {
            if std::env::var_os("RUST_TEST_THREADS").is_none() {
                // SAFETY: called before main, while no other thread exists to read the
                // environment.
                unsafe { std::env::set_var("RUST_TEST_THREADS", stringify!($threads)) };
            }
        }
    };
}
