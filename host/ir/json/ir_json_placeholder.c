// Placeholder until the JSON reader lands; removed by it.
int vyre__ir_json_placeholder;
