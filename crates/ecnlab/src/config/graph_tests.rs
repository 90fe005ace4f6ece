//! `topology.kind = "graph"`: its checks and its resolved form. The network
//! it builds is tested beside the builder (`topology/graph_tests.rs`).

use crate::config::Config;

fn graph(hosts: u32, switches: u32, links: &str, extra: &str) -> Result<Config, String> {
    let text = format!(
        "[run]\nduration = \"1ms\"\n[topology]\nkind = \"graph\"\nhosts = {hosts}\nswitches = {switches}\n\
         link_rate = \"100Gbps\"\nlink_delay = \"1us\"\nlinks = {links}\n{extra}"
    );
    Config::from_toml(&text).map_err(|e| e.to_string())
}

fn refused(hosts: u32, switches: u32, links: &str, want: &[&str]) {
    let e = graph(hosts, switches, links, "").expect_err(links);
    for w in want {
        assert!(e.contains(w), "{links}: {e:?} lacks {w:?}");
    }
}

/// Every fault gets one line naming the key, the link as written and the rule.
#[test]
fn bad_graphs_are_refused_naming_the_link() {
    // Host 0 linked twice.
    refused(
        2,
        1,
        "[[0, 2], [1, 2], [0, 2, \"10Gbps\"]]",
        &["topology.links[2] = [0, 2, \"10Gbps\", \"1us\"]", "a second link"],
    );
    refused(
        3,
        2,
        "[[0, 3], [1, 3], [2, 4], [0, 4], [3, 4]]",
        &["topology.links[3] = [0, 4, \"100Gbps\", \"1us\"]", "host 0 already has a link (links[0])"],
    );
    // An unknown node: hosts 0-1, switch 2.
    refused(
        2,
        1,
        "[[0, 2], [1, 5]]",
        &["topology.links[1] = [1, 5, \"100Gbps\", \"1us\"]", "node 5 does not exist", "switches 2 to 2"],
    );
    // A far-off id is refused like any other (and allocates nothing).
    refused(2, 1, "[[0, 2], [1, 4000000000]]", &["node 4000000000 does not exist"]);
    // A host with no link, a switch with none.
    refused(3, 1, "[[0, 3], [1, 3]]", &["topology.links: host 2 has no link"]);
    refused(2, 2, "[[0, 2], [1, 2]]", &["switch 3 has no link"]);
    // Two halves: hosts 0, 1 under switch 4; 2, 3 under switch 5.
    refused(
        4,
        2,
        "[[0, 4], [1, 4], [2, 5], [3, 5]]",
        &["host 2 cannot reach host 0", "links[2] = [2, 5, \"100Gbps\", \"1us\"]"],
    );
    // Host to host, a switch to itself.
    refused(2, 1, "[[0, 1], [1, 2]]", &["topology.links[0] = [0, 1, \"100Gbps\", \"1us\"]: links two hosts"]);
    refused(
        2,
        1,
        "[[0, 2], [1, 2], [2, 2]]",
        &["topology.links[2] = [2, 2, \"100Gbps\", \"1us\"]: links switch 2 to itself"],
    );
    // The same pair twice, either way round.
    refused(
        2,
        2,
        "[[0, 2], [1, 3], [2, 3], [3, 2]]",
        &["topology.links[3] = [3, 2, \"100Gbps\", \"1us\"]", "links[2] is the first"],
    );
    // A link without a rate where no default is set.
    let e = Config::from_toml(
        "[run]\nduration = \"1ms\"\n[topology]\nkind = \"graph\"\nhosts = 2\nswitches = 1\n\
         links = [[0, 2, \"1Gbps\", \"1us\"], [1, 2]]\n",
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.starts_with("topology.links[1] = [1, 2]: no rate; give it as the third item or set topology.link_rate"),
        "{e}"
    );
    // Shapes of an entry.
    refused(2, 1, "[[0, 2], [1]]", &["topology.links[1]", "two node ids"]);
    refused(2, 1, "[[0, 2], [1, 2, \"1us\"]]", &["topology.links[1][2]", "\"1us\""]);
    refused(2, 1, "[[0, 2], [1, 2, \"1Gbps\", \"1us\", 0]]", &["topology.links[1]", "at most 4 items"]);
    // Keys of other kinds.
    let e = graph(2, 1, "[[0, 2], [1, 2]]", "leaves = 2\n").unwrap_err();
    assert!(e.starts_with("topology.leaves: not a key of a graph"), "{e}");
    let e = graph(2, 1, "[[0, 2], [1, 2]]", "switch_names = [\"a\", \"b\"]\n").unwrap_err();
    assert!(e.starts_with("topology.switch_names = a list of 2: needs one name per switch (1)"), "{e}");
    let e = graph(2, 2, "[[0, 2], [1, 3], [2, 3]]", "switch_names = [\"a\", \"a\"]\n").unwrap_err();
    assert!(e.contains("\"a\" twice"), "{e}");
    // A graph's keys on another kind.
    let e = Config::from_toml(
        "[run]\nduration = \"1ms\"\n[topology]\nkind = \"star\"\nhosts = 2\nlink_rate = \"1Gbps\"\n\
         link_delay = \"1us\"\nlinks = [[0, 2], [1, 2]]\n",
    )
    .unwrap_err()
    .to_string();
    assert!(e.starts_with("topology.links: not a key of a star; it belongs to graph"), "{e}");
}

/// Links given in full and links filling in the defaults resolve alike.
#[test]
fn a_graph_resolves_to_whole_links() {
    let short = graph(2, 1, "[[0, 2], [1, 2]]", "").unwrap();
    let text = "[run]\nduration = \"1ms\"\n[topology]\nkind = \"graph\"\nhosts = 2\nswitches = 1\n\
                links = [[0, 2, \"100Gbps\", \"1000ns\"], [1, 2, \"100Gbps\", \"1us\"]]\n";
    let long = Config::from_toml(text).unwrap();
    assert_eq!(short.resolved_json(), long.resolved_json());
    let j = short.resolved_json();
    assert_eq!(j["topology"]["links"][0], serde_json::json!([0, 2, "100Gbps", "1us"]));
}
