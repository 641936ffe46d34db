#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz::termio_messages(data));
