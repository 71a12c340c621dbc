// contest2012: a bot written against the 2012 contest's API (docs/bot-api-2012.md), unchanged.
// Puts its most expensive playable card (a jack orders its most common suit), draws when it must.
window.addEvent('domready', function () {
    Bridge.AI = new Class({
        Extends: Bridge.AIUtils,

        movement: function (first) {
            var cards = this.player.hasPuttable();
            if (cards) {
                var best = cards.sort(function (a, b) { return b.getValue() - a.getValue(); })[0];
                if (best.rank == 'j') best.setRequireSuit(this.favouriteSuit(best));
                this.putCard(best, this.move.bind(this));
            } else if (!this.canFinishMove() && this.canGetCard()) {
                this.getCard(this.move.bind(this));
            } else {
                if (this.getPlayers().some(function (p) { return p.cards.length == 1; })) this.msg('последняя карта!');
                this.finishMove();
            }
        },

        favouriteSuit: function (jack) {
            var counts = {};
            this.player.cards.each(function (card) {
                if (card !== jack && card.rank != 'j') counts[card.suit] = (counts[card.suit] || 0) + 1;
            });
            var suits = Object.keys(counts);
            if (!suits.length) return jack.suit;
            return suits.sort(function (a, b) { return counts[b] - counts[a]; })[0];
        }
    });
});
