-- bench/lua.cfg: an action that reads a header and sets another, and a
-- service that answers a small body.
core.register_action("tag", { "http-req" }, function(txn)
    local ua = txn.http:req_get_headers()["user-agent"]
    txn.http:req_set_header("x-ua-seen", ua and ua[0] or "none")
end)

core.register_service("hello", "http", function(applet)
    applet:set_status(200)
    applet:add_header("content-type", "text/plain")
    applet:add_header("content-length", "6")
    applet:start_response()
    applet:send("hello\n")
end)
