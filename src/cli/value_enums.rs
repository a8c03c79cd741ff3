//! The command line's words for domain choices. The domain enums (output format, `--fail-on`,
//! serve's log format, metrics auth and heal mode) stay free of clap: their words, and the
//! help each word shows, are declared here.

use clap::ValueEnum;
use clap::builder::PossibleValue;

use crate::diagnose::finding::FailOn;
use crate::heal::heal_policy::HealMode;
use crate::monitor::access::MetricsAuth;
use crate::monitor::log::LogFormat;
use crate::render::OutputFormat;

/// `impl ValueEnum` for a domain enum: each variant, its word and its help.
macro_rules! value_words {
    ($ty:ty { $($variant:ident => $word:literal $(, $help:literal)?;)+ }) => {
        impl ValueEnum for $ty {
            fn value_variants<'a>() -> &'a [Self] {
                &[$(Self::$variant),+]
            }

            fn to_possible_value(&self) -> Option<PossibleValue> {
                Some(match self {
                    $(Self::$variant => PossibleValue::new($word)$(.help($help))?,)+
                })
            }
        }
    };
}

value_words!(OutputFormat {
    Table => "table";
    Wide => "wide";
    Json => "json";
    Yaml => "yaml";
    Jsonl => "jsonl", "One JSON object per line, written as each cluster of a fleet is read";
});

value_words!(FailOn {
    Error => "error";
    Warning => "warning";
    Never => "never";
});

value_words!(LogFormat {
    Text => "text";
    Json => "json";
});

value_words!(MetricsAuth {
    Kubernetes => "kubernetes", "A bearer token the API server accepts, of a user allowed to `get` the path";
    None => "none", "Anyone who reaches the port (as 0.1.0 answered)";
});

value_words!(HealMode {
    Off => "off";
    DryRun => "dry-run";
    On => "on";
});
