#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| revendor_fuzz::merge3(data));
