//! The repository's remote URL, for reports that name the repository without naming the
//! machine it was reviewed on.

use std::path::Path;

/// The URL of the `origin` remote, else of the only remote, as configured (it may carry
/// credentials: callers publishing it must strip them). `None` when the folder is not in
/// a repository, the repository has no such remote, or the URL is not UTF-8.
pub fn remote_url(repo_path: &Path) -> Option<String> {
    let repo = crate::resolve::open(repo_path).ok()?;
    if let Ok(origin) = repo.find_remote("origin") {
        return origin.url().ok().map(str::to_string);
    }
    let names = repo.remotes().ok()?;
    if names.len() != 1 {
        return None;
    }
    let name = names.get(0).ok().flatten()?;
    repo.find_remote(name).ok()?.url().ok().map(str::to_string)
}
