// Allocates without end: each string twice as long as the one before, all kept alive.
var parts = ["x"];
while (true) {
    parts.push(parts[parts.length - 1] + parts[parts.length - 1]);
}
