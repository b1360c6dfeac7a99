//! The kit as `static` data: string literals and slices the generated code
//! hands to `skillkit::__private::build_kit`. Nothing is parsed at run time.

use proc_macro2::{Literal, TokenStream};
use quote::quote;
use serde_json::{Map, Value};
use skillkit_parser::AgentDocument;

use crate::load::{LoadedKit, LoadedSkill};

/// A `KitData` expression for `kit`; `krate` is the path of `skillkit`.
pub(crate) fn kit(krate: &syn::Path, kit: &LoadedKit) -> TokenStream {
    let p = quote!(#krate::__private);
    let name = &kit.name;
    let source = &kit.source;
    let skills = kit.skills.iter().map(|s| skill(&p, s));
    let root_agent = match &kit.agent {
        Some(a) => {
            let a = agent(&p, a);
            quote!(::core::option::Option::Some(#a))
        }
        None => quote!(::core::option::Option::None),
    };
    let agents = kit.agents.iter().map(|a| agent(&p, a));
    let warnings = kit.warnings.iter().map(|w| {
        let path = w
            .path
            .as_deref()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let (line, column, message) = (w.line, w.column, &w.message);
        quote! {
            #p::WarningData { path: #path, line: #line, column: #column, message: #message }
        }
    });
    let digests = kit
        .digests
        .iter()
        .map(|(skill, digest)| quote!((#skill, #digest)));
    quote! {
        #p::KitData {
            name: #name,
            path: #source,
            digests: &[#(#digests),*],
            skills: &[#(#skills),*],
            agent: #root_agent,
            agents: &[#(#agents),*],
            warnings: &[#(#warnings),*],
        }
    }
}

fn skill(p: &TokenStream, skill: &LoadedSkill) -> TokenStream {
    let doc = &skill.doc;
    let name = &skill.name;
    let description = &doc.description;
    let body = &doc.body;
    let license = opt(&doc.license);
    let compatibility = opt(&doc.compatibility);
    let allowed_tools = &doc.allowed_tools;
    let metadata = map(p, &doc.metadata);
    let model = opt(&doc.model);
    let required_scope = opt(&doc.required_scope);
    let extra = map(p, &doc.extra);
    quote! {
        #p::SkillData {
            name: #name,
            description: #description,
            body: #body,
            license: #license,
            compatibility: #compatibility,
            allowed_tools: &[#(#allowed_tools),*],
            metadata: #metadata,
            model: #model,
            required_scope: #required_scope,
            extra: #extra,
        }
    }
}

fn agent(p: &TokenStream, doc: &AgentDocument) -> TokenStream {
    let name = &doc.name;
    let description = &doc.description;
    let model = opt(&doc.model);
    let system_prompt = &doc.system_prompt;
    let tools = &doc.tools;
    let max_turns = opt_count(doc.max_turns);
    let max_agent_depth = opt_count(doc.max_agent_depth);
    let metadata = map(p, &doc.metadata);
    let extra = map(p, &doc.extra);
    quote! {
        #p::AgentData {
            name: #name,
            description: #description,
            model: #model,
            system_prompt: #system_prompt,
            tools: &[#(#tools),*],
            max_turns: #max_turns,
            max_agent_depth: #max_agent_depth,
            metadata: #metadata,
            extra: #extra,
        }
    }
}

fn opt(text: &Option<String>) -> TokenStream {
    match text {
        Some(text) => quote!(::core::option::Option::Some(#text)),
        None => quote!(::core::option::Option::None),
    }
}

fn opt_count(count: Option<u32>) -> TokenStream {
    match count {
        Some(n) => quote!(::core::option::Option::Some(#n)),
        None => quote!(::core::option::Option::None),
    }
}

/// `&[("key", Json), …]`.
fn map(p: &TokenStream, map: &Map<String, Value>) -> TokenStream {
    let entries = map.iter().map(|(key, value)| {
        let value = json(p, value);
        quote!((#key, #value))
    });
    quote!(&[#(#entries),*])
}

fn json(p: &TokenStream, value: &Value) -> TokenStream {
    match value {
        Value::Null => quote!(#p::Json::Null),
        Value::Bool(b) => quote!(#p::Json::Bool(#b)),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                let i = Literal::i64_suffixed(i);
                quote!(#p::Json::I64(#i))
            } else if let Some(u) = n.as_u64() {
                let u = Literal::u64_suffixed(u);
                quote!(#p::Json::U64(#u))
            } else {
                let f = Literal::f64_suffixed(n.as_f64().unwrap_or_default());
                quote!(#p::Json::F64(#f))
            }
        }
        Value::String(s) => quote!(#p::Json::Str(#s)),
        Value::Array(items) => {
            let items = items.iter().map(|v| json(p, v));
            quote!(#p::Json::Array(&[#(#items),*]))
        }
        Value::Object(entries) => {
            let entries = map(p, entries);
            quote!(#p::Json::Object(#entries))
        }
    }
}
