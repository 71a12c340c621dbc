/*
 * All ranks: ["a", "k", "q", "j", "10", "9", "8", "7", "6"],
 * All suits: ["s", "c", "h", "d"],
 *
 * You can read:
 * this.getPlayers().length
 * this.getPlayers()[i].cards.length
 * this.getPlayers()[i].score
 *
 * card.getValue() - the card's value
 * card.getName() - the card's Russian name
 * card.setRequireSuit(suit) - the card orders a suit (one of ["s", "c", "h", "d"]) if its rank is "j"
 *
 * this.player.hasPuttable() - a puttable card, or null if there is none
 * this.player.sumCards() - the value of all cards in hand
 */
window.addEvent('domready', function () {
Bridge.AI = new Class({
	Extends: Bridge.AIUtils,
	// @Override
	initialize: function (player) {
		this.parent(player);
		// this.debug();
	},
	putCardSmart: function (card) {
		if (card.rank == 'j') {
			card.setRequireSuit(
				['s', 'c', 'h', 'd'].getRandom()
			);
		}
		this.putCard(card, this.finishSmart.bind(this));
	},
	// @private - part of the demo logic
	getCardSmart: function () {
		this.getCard(function (card) {
			this.canPutCard(card) ?
				this.putCardSmart(card) :
				this.finishSmart();
		}.bind(this));
	},
	// @private - part of the demo logic
	finishSmart: function () {
		this.canFinishMove() ?
			this.finishMove() :
			this.move();
	},
	// @Override
	movement: function (first) {
		if (first) {
			this.finishSmart();
		} else {
			var card = this.player.hasPuttable();
			card ? this.putCardSmart(card) : this.getCardSmart();
		}
	}
	// @protected getPlayers()   the array of players
	// @protected msg(msg)       shows a text message on screen (returns this)
	// @protected lastCard()     the last card put
	// @protected debug()        open all cards (for debugging only)
	// @protected canGetCard()   true if you may take a card from the deck
	// @protected getCard(onFinish)       takes a card from the deck or throws; onFinish gets the card
	// @protected canPutCard(card)        true if the card may be put
	// @protected putCard(card, onFinish) puts the card or throws
	// @protected canFinishMove()         true if the move may be finished
	// @protected finishMove()            finishes the move, or throws
});
});
