// expect: exception
// A 2012-API bot that calls debug(): refused, an exception fault each move, the game completes.
window.addEvent('domready', function () {
    Bridge.AI = new Class({ Extends: Bridge.AIUtils, movement: function (first) { this.debug(); } });
});
