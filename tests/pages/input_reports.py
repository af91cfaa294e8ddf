"""The page script's input reports, sent in an AppTest run as the browser sends them: the tests' one way."""

import json


def with_input_report(at, report: dict):
    """Run ``at`` as the browser does when the activity component (``structext_answer_activity``) reports
    input: its state (``{"report": ...}``) goes with the page's other widget values."""
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    [component] = [e for e in at.get("bidi_component") if e.proto.component_name == "structext_answer_activity"]
    states = at._tree.get_widget_states()
    state = WidgetState(id=component.proto.id)
    state.json_value = json.dumps({"report": report})
    states.widgets.append(state)
    return at._run(widget_state=states)
