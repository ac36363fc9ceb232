//! `needle tokenize` / `needle detokenize`: the container's own tokenizer, from the command line.
use needle_web::container;
use needle_web::json::Value;
use needle_web::tokenizer::Tokenizer;

use crate::model;
use crate::{Args, Failure};

pub const USAGE: &str = "tokenize [--model F] --text S";
pub const DETOKENIZE_USAGE: &str = "detokenize [--model F] --ids 2,17,...";

fn tokenizer(args: &mut Args) -> Result<Tokenizer, Failure> {
    let model = model::read(args)?;
    Ok(Tokenizer::from_blob(container::parse(&model.bytes)?.tokenizer())?)
}

pub fn run(mut args: Args) -> Result<(), Failure> {
    let tokenizer = tokenizer(&mut args)?;
    let text = args.required("--text")?;
    args.finish()?;
    let ids = tokenizer.encode(&text);
    println!("{}", Value::Array(ids.iter().map(|i| Value::Int(i.to_string())).collect()).to_json());
    Ok(())
}

pub fn detokenize(mut args: Args) -> Result<(), Failure> {
    let tokenizer = tokenizer(&mut args)?;
    let ids = model::ids(&args.required("--ids")?)?;
    args.finish()?;
    if let Some(&id) = ids.iter().find(|&&id| id as usize >= tokenizer.vocab_len()) {
        return Err(
            needle_web::Error::TokenOutOfVocab { id, vocab: tokenizer.vocab_len() as u32 }.into()
        );
    }
    println!("{}", tokenizer.decode(&ids));
    Ok(())
}
