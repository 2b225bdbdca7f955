// Package docscheck keeps the documentation true to the repository. Its
// tests (docscheck_test.go; no code of its own) read README.md and every
// Markdown file under docs/ and fail on:
//
//   - a relative link to a file or directory that does not exist, or that
//     leaves the repository;
//   - an anchor (#...) that matches no heading of its target, by GitHub's
//     rules (lower case, spaces to '-', punctuation but '-' and '_' dropped,
//     a repeated heading numbered -1, -2, ...);
//   - a link to anything but a relative path or a public https URL
//     (external URLs are never fetched);
//   - the layout in docs/architecture.md ("Layout") listing a path that does
//     not exist, or missing a package directory of pkg/ (two levels deep) or
//     a suite of test/e2e/, unless excluded in layoutExcluded with a reason;
//   - a README longer than readmeMaxLines, and figures dated by working
//     units ("session 4", "issue 22") instead of dates, commits or versions.
//
// make lint runs it (go test ./hack/docscheck/), and so does make test with
// every other package.
package docscheck
