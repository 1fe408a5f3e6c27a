use duration::{format, parse};

#[test]
fn parsing_what_was_formatted_gives_it_back() {
    for seconds in [1, 59, 61, 3_600, 90_061] {
        assert_eq!(parse(&format(seconds)), Ok(seconds));
    }
}

#[test]
fn spaces_between_parts_are_allowed() {
    assert_eq!(parse("2d 4h"), Ok(2 * 86_400 + 4 * 3_600));
}
