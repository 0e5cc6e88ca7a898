from cfannotate.crowd.checks import crowd_settings_check


def test_a_bad_bonus_ceiling_is_a_system_check_error(settings):
    assert crowd_settings_check(None) == []
    settings.CROWD_MAX_BONUS = "lots"
    assert [problem.id for problem in crowd_settings_check(None)] == ["crowd.E001"]


def test_non_https_frame_origins_are_a_warning_in_production(settings):
    settings.DEBUG = False
    settings.CROWD_MTURK_FRAME_ORIGINS = ["http://www.mturk.com"]
    assert [problem.id for problem in crowd_settings_check(None)] == ["crowd.W001"]
