package chaos

// Syncer bugs this test found that are not fixed yet go here: a named
// constant each, with what goes wrong and why, and a function that tells a
// difference that is exactly that bug (report.knownBug counts it apart
// instead of failing the run, and TestChaos then skips, naming it, unless
// something else failed). Delete a bug's entry once it is fixed, so that
// it fails the run again.
//
// None is open. Found and fixed so far:
//   - a host pod's vcluster.loft.sh/labels written from the virtual labels
//     as they were before the merge (missing labels just copied from the
//     host pod), and a Service deleted and created again under its name
//     taking the deleted one's labels and annotations (689d3fa);
//   - a pod's token Secret left without its owner when the syncer died
//     between making it and owning it, and a tenant pod deleted because a
//     host cache lagging after a host API server restart had not seen its
//     new host pod (7295fa5);
//   - a token Secret leaked when the syncer died before making its pod,
//     and a host copy left behind by a virtual object deleted just after
//     the syncer made the copy, whose watch event was dropped as the
//     syncer's own echo (0e064f3);
//   - a pod deleted and made again under its name removed at once, as if
//     evicted: the syncer still remembered the deleted pod's host pod
//     under the name and took it for the new pod's (the last-seen record
//     now carries the virtual UID), and a virtual pod could be ended on a
//     host cache that had not seen its host pod yet (now asked of the
//     host API server) — found by CI at dae0a42.
