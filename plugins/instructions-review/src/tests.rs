use super::*;
use vouch_specialist_kit::testing;

#[test]
fn only_the_conventions_area_is_accepted() {
    testing::assert_reports_only_in_area(&InstructionsReview, Area::Conventions, Area::Security);
}
