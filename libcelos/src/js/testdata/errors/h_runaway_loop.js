// An endless loop that even swallows the errors thrown at it.
var n = 0;
while (true) {
    try { n++; } catch (e) { }
}
