//! What a paged LIST may claim. `remainingItemCount` and `continue` come from the server: a
//! broken or hostile one can announce billions of items (an allocation that aborts the
//! process) or hand out `continue` tokens forever (a read that never ends). The count is only
//! a hint for the allocation, capped by the items a list may hold; the pages and the items
//! are bounded, and a token the server already gave is refused.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

pub(crate) use crate::input::limits::{MOST_ITEMS, MOST_PAGES};
pub(crate) use crate::input::read_error::causes::PagingLie;

/// One list's pages so far.
#[derive(Debug, Default)]
pub(crate) struct Paging {
    pages: usize,
    items: usize,
    tokens: HashSet<String>,
}

/// What to do after a page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NextPage {
    /// Ask for the page after `continue`.
    Continue(String),
    Done,
}

impl Paging {
    /// How many more items to make room for, given the page just read (`items_in_page`) and
    /// the server's `remainingItemCount`: the hint, never beyond what a list may hold.
    pub(crate) fn room_for(&self, items_in_page: usize, remaining: Option<i64>) -> usize {
        let hinted = remaining.and_then(|r| usize::try_from(r).ok()).unwrap_or(0);
        let left = MOST_ITEMS.saturating_sub(self.items);
        items_in_page.saturating_add(hinted).min(left)
    }

    /// Counts a page of `items_in_page` items that ended with `continue_token`.
    pub(crate) fn after_page(
        &mut self,
        items_in_page: usize,
        continue_token: Option<String>,
    ) -> Result<NextPage, PagingLie> {
        self.pages += 1;
        self.items = self.items.saturating_add(items_in_page);
        if self.items > MOST_ITEMS {
            return Err(PagingLie::TooManyItems);
        }
        let Some(token) = continue_token.filter(|t| !t.is_empty()) else {
            return Ok(NextPage::Done);
        };
        if self.pages >= MOST_PAGES {
            return Err(PagingLie::TooManyPages);
        }
        if !self.tokens.insert(token.clone()) {
            return Err(PagingLie::RepeatedContinue);
        }
        Ok(NextPage::Continue(token))
    }
}

/// The lists under way on one client, told apart by their path and selectors (kube sends the
/// first page's `resourceVersion` and the later pages' `continue` token in their place), for the readers that page through kube's watcher, whose pages are not
/// seen otherwise: every request that carries a token counts as a page of its list, and a
/// request without one starts that list afresh.
#[derive(Debug, Default)]
pub(crate) struct PageChains {
    chains: Mutex<HashMap<String, Paging>>,
}

impl PageChains {
    /// Counts a request for `path?query`; `Err` when it continues a list that lied.
    pub(crate) fn request(&self, path: &str, query: &str) -> Result<(), PagingLie> {
        let mut token = None;
        let mut rest: Vec<&str> = Vec::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            match pair.strip_prefix("continue=") {
                Some(t) => token = Some(t.to_string()),
                None if pair.starts_with("resourceVersion") => {}
                None => rest.push(pair),
            }
        }
        rest.sort_unstable();
        let list = format!("{path}?{}", rest.join("&"));
        let mut chains = self.chains.lock().unwrap_or_else(|e| e.into_inner());
        match token.filter(|t| !t.is_empty()) {
            None => {
                chains.remove(&list);
                Ok(())
            }
            Some(token) => {
                let paging = chains.entry(list.clone()).or_default();
                let counted = paging.after_page(0, Some(token)).map(drop);
                if counted.is_err() {
                    chains.remove(&list);
                }
                counted
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_remaining_count_is_a_hint_capped_by_the_items_a_list_may_hold() {
        let paging = Paging::default();
        assert_eq!(paging.room_for(500, Some(1_200)), 1_700);
        assert_eq!(paging.room_for(500, Some(4_000_000_000)), MOST_ITEMS);
        assert_eq!(paging.room_for(500, Some(i64::MAX)), MOST_ITEMS);
        assert_eq!(paging.room_for(500, Some(-7)), 500);
        assert_eq!(paging.room_for(3, None), 3);
    }

    #[test]
    fn a_list_ends_without_a_token_and_follows_new_ones() {
        let mut paging = Paging::default();
        assert_eq!(
            paging.after_page(500, Some("a".into())),
            Ok(NextPage::Continue("a".into()))
        );
        assert_eq!(
            paging.after_page(500, Some("b".into())),
            Ok(NextPage::Continue("b".into()))
        );
        assert_eq!(
            paging.after_page(12, Some(String::new())),
            Ok(NextPage::Done)
        );
    }

    #[test]
    fn a_repeated_token_is_refused() {
        let mut paging = Paging::default();
        paging.after_page(1, Some("same".into())).unwrap();
        assert_eq!(
            paging.after_page(1, Some("same".into())),
            Err(PagingLie::RepeatedContinue)
        );
    }

    #[test]
    fn endless_tokens_end_at_the_page_bound() {
        let mut paging = Paging::default();
        let mut pages = 0;
        let lie = loop {
            pages += 1;
            match paging.after_page(0, Some(format!("t{pages}"))) {
                Ok(_) => continue,
                Err(lie) => break lie,
            }
        };
        assert_eq!((lie, pages), (PagingLie::TooManyPages, MOST_PAGES));
    }

    #[test]
    fn requests_that_repeat_a_token_or_never_end_are_refused() {
        let chains = PageChains::default();
        let list = "/api/v1/nodes";
        chains.request(list, "limit=500&resourceVersion=0").unwrap();
        chains.request(list, "limit=500&continue=a").unwrap();
        // Another list on the same path is told apart by its query.
        chains.request(list, "continue=a&limit=5").unwrap();
        assert_eq!(
            chains.request(list, "continue=a&limit=500"),
            Err(PagingLie::RepeatedContinue)
        );
        chains.request(list, "limit=500").unwrap();
        let pages = (1..)
            .find(|n| {
                chains
                    .request(list, &format!("limit=500&continue=t{n}"))
                    .is_err()
            })
            .unwrap();
        assert_eq!(pages, MOST_PAGES);
        // A fresh list starts counting again.
        chains.request(list, "limit=500").unwrap();
        chains.request(list, "limit=500&continue=t1").unwrap();
    }

    #[test]
    fn items_past_the_bound_are_refused() {
        let mut paging = Paging::default();
        for n in 0..MOST_ITEMS / 500 {
            paging.after_page(500, Some(format!("t{n}"))).unwrap();
        }
        assert_eq!(
            paging.after_page(1, Some("more".into())),
            Err(PagingLie::TooManyItems)
        );
    }
}
