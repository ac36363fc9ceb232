//! A staged call's arguments and value as JS values (the `gpu` build, web/suspend.rs): the
//! conversions the glue makes on a direct call, for the types web/calls.rs's methods take and
//! return. A missing or mistyped argument is `invalid_argument`.
use alloc::string::String;
use alloc::vec::Vec;

use wasm_bindgen::JsValue;

use super::js::error;
use crate::Error;

/// A listed method's argument as `stage` receives it from JS (`None`: not given).
pub(super) trait Arg: Sized {
    fn from_js(v: Option<&JsValue>) -> Result<Self, JsValue>;
}

fn wrong() -> JsValue {
    error(Error::InvalidArgument { name: "args", reason: "wrong arguments" })
}

impl Arg for String {
    fn from_js(v: Option<&JsValue>) -> Result<Self, JsValue> {
        v.and_then(JsValue::as_string).ok_or_else(wrong)
    }
}

impl Arg for Option<String> {
    fn from_js(v: Option<&JsValue>) -> Result<Self, JsValue> {
        match v {
            Some(v) if !v.is_undefined() && !v.is_null() => String::from_js(Some(v)).map(Some),
            _ => Ok(None),
        }
    }
}

impl Arg for f64 {
    fn from_js(v: Option<&JsValue>) -> Result<Self, JsValue> {
        v.and_then(JsValue::as_f64).ok_or_else(wrong)
    }
}

impl Arg for Vec<u32> {
    /// From an array or a typed array.
    fn from_js(v: Option<&JsValue>) -> Result<Self, JsValue> {
        let ids = v.filter(|v| v.is_object()).ok_or_else(wrong)?;
        Ok(js_sys::Uint32Array::new(ids).to_vec())
    }
}

/// A listed method's value as `take_result` returns it: what the glue makes of it on a direct
/// call.
pub(super) trait Outcome {
    fn into_js(self) -> JsValue;
}

impl Outcome for () {
    fn into_js(self) -> JsValue {
        JsValue::UNDEFINED
    }
}

impl Outcome for JsValue {
    fn into_js(self) -> JsValue {
        self
    }
}

impl Outcome for u32 {
    fn into_js(self) -> JsValue {
        self.into()
    }
}

impl Outcome for bool {
    fn into_js(self) -> JsValue {
        self.into()
    }
}

impl Outcome for String {
    fn into_js(self) -> JsValue {
        self.into()
    }
}

impl Outcome for Vec<f32> {
    fn into_js(self) -> JsValue {
        js_sys::Float32Array::from(&self[..]).into()
    }
}

impl Outcome for Vec<u8> {
    fn into_js(self) -> JsValue {
        js_sys::Uint8Array::from(&self[..]).into()
    }
}
