// A syntax error on line 3: nothing of this file is defined.
var ok = 1;
var broken = ;
