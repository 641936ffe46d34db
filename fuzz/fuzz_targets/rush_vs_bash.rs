#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz::rush_vs_bash(data));
