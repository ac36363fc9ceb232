//! Small conversions between core values and JS values.
use js_sys::{Object, Reflect};
use wasm_bindgen::JsValue;

use crate::Error;

/// A JS `Error` named `NeedleError` whose `code` is the core's stable code.
pub fn error(e: Error) -> JsValue {
    let err = js_sys::Error::new(&e.to_string());
    err.set_name("NeedleError");
    // Setting a plain data property on a fresh Error cannot fail.
    let _ = Reflect::set(&err, &JsValue::from_str("code"), &JsValue::from_str(e.code()));
    err.into()
}

/// Builds a plain JS object one property at a time.
pub struct Obj(Object);

impl Obj {
    pub fn new() -> Self {
        Obj(Object::new())
    }

    pub fn set(self, key: &str, value: impl Into<JsValue>) -> Self {
        // A fresh ordinary object accepts every data property.
        let _ = Reflect::set(&self.0, &JsValue::from_str(key), &value.into());
        self
    }

    pub fn build(self) -> JsValue {
        self.0.into()
    }
}
