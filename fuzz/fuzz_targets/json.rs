//! The JSON parser: any text parses or gives a typed error; what parses re-serialises to text
//! that parses to the same value.
#![no_main]
use libfuzzer_sys::fuzz_target;
use needle_web::json;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(value) = json::parse(text) {
        let again = json::parse(&value.to_json()).expect("serialised JSON parses");
        assert_eq!(again.to_json(), value.to_json());
    }
});
